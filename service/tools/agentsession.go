package tools

import (
	"context"
	"errors"

	"github.com/buildguard/buildguard/agentproto"
)

// sessionOpen connects with the session tools' bounds: timeoutMs for the
// connect and handshake, a fresh timeoutMs for the gate.
func (c *toolCall) sessionOpen(ctx context.Context) (*agentproto.Conn, error) {
	if owner, ok := c.str["owner"]; ok && !agentproto.ValidToken(owner) {
		// An invalid owner passes argument validation (reclazz_build alone
		// checks it as an argument) but cannot open a session, as in the
		// contract (docs/mcp-server.md#7 item 3).
		return nil, errors.New("invalid owner: 1-64 ASCII letters, digits, _ or -")
	}
	_, conn, err := c.open(ctx, c.timeout)
	return conn, err
}

// step returns a context for one exchange of a session: a fresh timeoutMs.
func (c *toolCall) step(ctx context.Context) (context.Context, context.CancelFunc) {
	return context.WithTimeout(ctx, c.timeout)
}

// sessionMessage is how session tools word an open failure: endpoint errors
// as they are, socket failures after "Cannot open build session: ", each in
// the front's words (Deps.Advice).
func (c *toolCall) sessionMessage(err error) string {
	var oe *openError
	if errors.As(err, &oe) && oe.beforeSocket {
		return c.words(oe.err)
	}
	if errors.Is(err, agentproto.ErrInvalidHandshake) {
		return "Cannot open build session: No valid agent handshake"
	}
	return "Cannot open build session: " + c.words(err)
}

// words is err's text with what to do next in the words of the front that
// presents the tools (Deps.Advice): the tools' argument names for an MCP
// client, flags on the command line (docs/decisions.md#D2).
func (c *toolCall) words(err error) string { return c.deps.Advice.Word(err) }
