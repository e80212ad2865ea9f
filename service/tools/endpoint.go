package tools

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"time"

	"github.com/buildguard/buildguard/agentproto"
)

// simpleConnectTimeout bounds the connect of the simple tools (status, scan,
// pending, diagnose) whatever their timeoutMs (docs/decisions.md#D7).
const simpleConnectTimeout = 2000 * time.Millisecond

// selectEndpoint checks the endpoint arguments and sets the call's endpoint
// and gated project (docs/mcp-server.md#4.0): projectDir resolves against the
// base and must exist; the startup port file applies only when the call names
// no endpoint at all; the gate is armed by a startup or call projectDir.
func (c *toolCall) selectEndpoint() error {
	project := c.deps.Base
	if v, ok := c.str["projectDir"]; ok {
		p, err := canonicalDir(c.deps.Base, v)
		if err != nil {
			return argErrorIn("projectDir", "must name an existing directory")
		}
		project = p
	}
	for _, k := range []string{"portFile", "hybrisHome"} {
		if v, ok := c.str[k]; ok && agentproto.IsBlank(v) {
			return argErrorIn(k, "must not be blank")
		}
	}
	if v, ok := c.str["port"]; ok && agentproto.IsBlank(v) {
		return argErrorIn("port", "must not be blank")
	}
	c.endpoint = agentproto.Endpoint{Port: c.str["port"], PortFile: c.str["portFile"], HybrisHome: c.str["hybrisHome"], Base: project}
	_, explicit := c.str["projectDir"]
	if c.endpoint.Port == "" && c.endpoint.PortFile == "" && c.endpoint.HybrisHome == "" && !explicit {
		c.endpoint.PortFile = c.deps.StartupPortFile
	}
	if c.deps.ProjectSelected || explicit {
		c.project = project
	}
	return nil
}

// canonicalDir resolves p against base and returns its real path, which must
// be an existing directory.
func canonicalDir(base, p string) (string, error) {
	if !filepath.IsAbs(p) {
		p = filepath.Join(base, p)
	}
	real, err := filepath.EvalSymlinks(p)
	if err != nil {
		return "", err
	}
	fi, err := os.Stat(real)
	if err != nil {
		return "", err
	}
	if !fi.IsDir() {
		return "", errors.New("not a directory")
	}
	return real, nil
}

// open resolves the endpoint, connects, and runs the gate when armed.
// It returns the resolved port (also on failure, when known) and a Conn.
// The connect is bounded by connectTimeout, the handshake and the gate by a
// fresh timeoutMs each (all within ctx, which carries the whole budget of the
// simple tools and of verify_batch).
func (c *toolCall) open(ctx context.Context, connectTimeout time.Duration) (int, *agentproto.Conn, error) {
	port, err := c.endpoint.Resolve()
	if err != nil {
		return port, nil, &openError{err: err, beforeSocket: true}
	}
	d := c.deps.Dialer
	d.ConnectTimeout = connectTimeout
	d.HandshakeTimeout = c.timeout
	conn, err := d.Dial(ctx, port)
	if err != nil {
		return port, nil, &openError{err: err}
	}
	if c.project != "" {
		gctx, cancel := context.WithTimeout(ctx, c.timeout)
		defer cancel()
		if err := conn.ConfirmProject(gctx, c.project); err != nil {
			conn.Close()
			return port, nil, &openError{err: err}
		}
	}
	return port, conn, nil
}

// openError is a failure to reach a confirmed agent: endpoint resolution
// (beforeSocket), connect, handshake or the project gate.
type openError struct {
	err          error
	beforeSocket bool
}

func (e *openError) Error() string { return e.err.Error() }
func (e *openError) Unwrap() error { return e.err }

// simpleOpen connects with the simple tools' connect bound and one deadline
// of timeoutMs for the whole call. The returned done closes the connection
// and releases the deadline.
func (c *toolCall) simpleOpen(ctx context.Context) (context.Context, context.CancelFunc, int, *agentproto.Conn, error) {
	ctx, cancel := context.WithTimeout(ctx, c.timeout)
	port, conn, err := c.open(ctx, min(c.timeout, simpleConnectTimeout))
	if err != nil {
		cancel()
		return nil, nil, port, nil, err
	}
	return ctx, func() { conn.Close(); cancel() }, port, conn, nil
}
