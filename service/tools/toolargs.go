package tools

import (
	"encoding/json"
	"fmt"
	"time"

	"github.com/buildguard/buildguard/agentproto"
	"github.com/buildguard/buildguard/buildguard"
)

// The argument limits of every tool (docs/mcp-server.md#4.0).
const (
	// maxArgLength bounds every string argument, in UTF-16 units.
	maxArgLength = 4096
	// maxBatchItems bounds reclazz_verify_batch.
	maxBatchItems = 32
	// maxTimeoutMs bounds timeoutMs: the core's bound of a guarded build's
	// agent timeout, the same for the wrapper's --timeout-ms.
	maxTimeoutMs = int(buildguard.MaxTimeout / time.Millisecond)
)

// ArgError is an invalid call: the cases MCP answers with -32602 and the CLI
// with exit 2. Nothing connected to an agent.
type ArgError struct {
	// Message is the error text, e.g. "timeoutMs must be an integer string between 1 and 60000".
	Message string
	// Arg is the argument the message starts with, e.g. "timeoutMs", so
	// that a front whose users give it another way (the CLI's flags) can
	// name it in their terms; "" when the message names no one argument.
	Arg string
	// Rule is what is wrong with Arg, the message after its name, e.g.
	// "must not be blank", for a front that names Arg its own way; "" when
	// Arg is.
	Rule string
	// Protocol marks errors in the request itself rather than in the tool's
	// arguments (unknown tool, name not a string, arguments not an object).
	// They stay JSON-RPC -32602 in every protocol version, while argument errors
	// become isError tool results in 2025-11-25 sessions (docs/decisions.md#D5).
	Protocol bool
}

func (e *ArgError) Error() string { return e.Message }

func argError(format string, a ...any) error {
	return &ArgError{Message: fmt.Sprintf(format, a...)}
}

// argErrorIn is an argument error whose message starts with the name of
// argument arg.
func argErrorIn(arg, format string, a ...any) error {
	rule := fmt.Sprintf(format, a...)
	return &ArgError{Message: arg + " " + rule, Arg: arg, Rule: rule}
}

// toolCall is one validated tool call: the tool, its arguments, its effective
// timeout and endpoint, and the instance's deps.
type toolCall struct {
	deps *Deps
	tool *Tool // nil for an unknown name, which fails after the common checks
	name string
	args map[string]json.RawMessage
	str  map[string]string // the known string arguments present
	// timeout is timeoutMs, else the tool's default.
	timeout time.Duration
	// endpoint selects the agent port; project is the directory the gate
	// confirms ("" when the gate is not armed).
	endpoint agentproto.Endpoint
	project  string
	// passThrough filters the agent objects that results pass through.
	passThrough passThrough
}

// knownKeys are the argument names every tool checks, in checking order
// (docs/mcp-server.md#4.0 step 3).
var knownKeys = []string{"projectDir", "portFile", "port", "hybrisHome", "timeoutMs", "className", "sha256", "state", "owner", "action"}

// newCall runs the common argument checks of a call of tool t (nil when no
// tool is called name) and selects its endpoint.
func newCall(deps *Deps, t *Tool, name string, args map[string]json.RawMessage) (*toolCall, error) {
	c := &toolCall{deps: deps, tool: t, name: name, args: args, str: map[string]string{}}
	for _, k := range knownKeys {
		raw, ok := args[k]
		if !ok {
			continue
		}
		var v string
		if len(raw) == 0 || raw[0] != '"' || json.Unmarshal(raw, &v) != nil {
			return nil, argErrorIn(k, "must be a string")
		}
		if agentproto.UTF16Len(v) > maxArgLength || agentproto.HasControl(v) {
			return nil, argErrorIn(k, "exceeds %d characters or contains a control character", maxArgLength)
		}
		c.str[k] = v
	}
	c.timeout = simpleTimeout
	if t != nil {
		c.timeout = t.timeout
	}
	if v, ok := c.str["timeoutMs"]; ok {
		n, ok := agentproto.ParseJavaInt(v)
		if !ok || n < 1 || n > maxTimeoutMs {
			return nil, argErrorIn("timeoutMs", "must be an integer string between 1 and %d", maxTimeoutMs)
		}
		c.timeout = time.Duration(n) * time.Millisecond
	}
	if err := c.selectEndpoint(); err != nil {
		return nil, err
	}
	return c, nil
}
