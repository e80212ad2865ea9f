package mcp

import (
	"context"
	"encoding/json"

	"github.com/buildguard/buildguard/tools"
)

// Caller runs one tool call: *tools.Service in production, a fake in tests.
//
// Call validates the arguments and runs the tool. An error of type
// *tools.ArgError is an invalid call (-32602, or an isError result for
// argument errors in 2025-11-25 sessions); any other error is a broken
// invariant (-32603). Call must return promptly once ctx is cancelled.
type Caller interface {
	Call(ctx context.Context, name string, args map[string]json.RawMessage) (tools.Result, error)
}
