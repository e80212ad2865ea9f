package mcp

import (
	"context"
	"encoding/json"

	"github.com/buildguard/buildguard/service/tools"
)

// Caller runs one tool call: *Service in production, a fake in tests.
//
// Call validates the arguments and runs the tool. An error of type
// *tools.ArgError is an invalid call (-32602, or an isError result for
// argument errors in 2025-11-25 sessions); any other error is a broken
// invariant (-32603). Call must return promptly once ctx is cancelled.
//
// Check runs only the argument checks of Call, touching no agent: it returns
// the *tools.ArgError Call would return, or nil. The server uses it to answer
// an invalid verification batch at once instead of on the batch slot.
type Caller interface {
	Call(ctx context.Context, name string, args map[string]json.RawMessage) (tools.Result, error)
	Check(name string, args map[string]json.RawMessage) error
}
