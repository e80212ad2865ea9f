package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/buildguard/buildguard/service/tools"
)

// fakeCaller is a deterministic Caller for protocol tests. It mimics the
// argument checks the real service makes where a test needs them:
//
//   - an unknown tool name is a protocol tools.ArgError, after the arguments;
//   - "timeoutMs":"bad" is an argument tools.ArgError;
//   - "mode":"panic" panics, "mode":"broken" returns a non-tools.ArgError error;
//   - reclazz_verify_batch blocks until ctx is cancelled, or until a value
//     arrives on release when release is set.
type fakeCaller struct {
	release chan tools.Result // nil: a batch blocks until cancelled
	deaf    chan struct{}     // non-nil: a batch ignores ctx and waits for this to close
}

func (f *fakeCaller) Call(ctx context.Context, name string, args map[string]json.RawMessage) (tools.Result, error) {
	if string(args["timeoutMs"]) == `"bad"` {
		return tools.Result{}, &tools.ArgError{Message: "timeoutMs must be an integer string between 1 and 60000"}
	}
	switch string(args["mode"]) {
	case `"panic"`:
		panic("fake caller panicked")
	case `"broken"`:
		return tools.Result{}, errors.New("fake invariant broken")
	}
	if !isKnownTool(name) {
		return tools.Result{}, &tools.ArgError{Message: "Unknown tool: " + name, Protocol: true}
	}
	if name == tools.ToolVerifyBatch && f.deaf != nil {
		<-f.deaf
		return tools.Result{Data: json.RawMessage(`{"status":"unavailable"}`), IsError: true}, nil
	}
	if name == tools.ToolVerifyBatch {
		select {
		case <-ctx.Done():
			return tools.Result{Data: json.RawMessage(`{"status":"unavailable"}`), IsError: true, LegacyText: "cancelled"}, nil
		case r := <-f.releaseChan():
			return r, nil
		}
	}
	data := fmt.Sprintf(`{"status":"sent","detail":"fake %s","reloadConfirmed":false}`, name)
	return tools.Result{Data: json.RawMessage(data), LegacyText: "legacy text of " + name}, nil
}

// Check mimics the argument checks of Call.
func (f *fakeCaller) Check(name string, args map[string]json.RawMessage) error {
	if string(args["timeoutMs"]) == `"bad"` {
		return &tools.ArgError{Message: "timeoutMs must be an integer string between 1 and 60000"}
	}
	if !isKnownTool(name) {
		return &tools.ArgError{Message: "Unknown tool: " + name, Protocol: true}
	}
	return nil
}

func (f *fakeCaller) releaseChan() <-chan tools.Result {
	if f.release == nil {
		return nil
	}
	return f.release
}

func isKnownTool(name string) bool {
	for _, n := range tools.Names() {
		if n == name {
			return true
		}
	}
	return false
}
