package mcptest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/buildguard/buildguard/service/tools"
)

// FakeCaller is a deterministic Caller for protocol tests. It mimics the
// argument checks the real service makes where a test needs them:
//
//   - an unknown tool name is a protocol tools.ArgError, after the arguments;
//   - "timeoutMs":"bad" is an argument tools.ArgError;
//   - "mode":"panic" panics, "mode":"broken" returns a non-tools.ArgError error;
//   - reclazz_verify_batch blocks until ctx is cancelled, or until a value
//     arrives on Release when Release is set.
type FakeCaller struct {
	Release chan tools.Result // nil: a batch blocks until cancelled
	Deaf    chan struct{}     // non-nil: a batch ignores ctx and waits for this to close
	Started chan string       // optional: receives the tool name when a call starts

	mu        sync.Mutex
	cancelled int // batches that saw their ctx cancelled
}

// AwaitStart waits, at most 10 s, until a call started, and returns the
// tool's name. Started must be set.
func (f *FakeCaller) AwaitStart(t testing.TB) string {
	t.Helper()
	select {
	case name := <-f.Started:
		return name
	case <-time.After(10 * time.Second):
		t.Fatal("no tool call started within 10 s")
		return ""
	}
}

// Call answers as the doc comment of FakeCaller says.
func (f *FakeCaller) Call(ctx context.Context, name string, args map[string]json.RawMessage) (tools.Result, error) {
	if f.Started != nil {
		f.Started <- name
	}
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
	if name == tools.ToolVerifyBatch && f.Deaf != nil {
		<-f.Deaf
		return tools.Result{Data: json.RawMessage(`{"status":"unavailable"}`), IsError: true}, nil
	}
	if name == tools.ToolVerifyBatch {
		select {
		case <-ctx.Done():
			f.mu.Lock()
			f.cancelled++
			f.mu.Unlock()
			return tools.Result{Data: json.RawMessage(`{"status":"unavailable"}`), IsError: true, LegacyText: "cancelled"}, nil
		case r := <-f.Release: // a nil Release blocks: only ctx ends the batch
			return r, nil
		}
	}
	data := fmt.Sprintf(`{"status":"sent","detail":"fake %s","reloadConfirmed":false}`, name)
	return tools.Result{Data: json.RawMessage(data), LegacyText: "legacy text of " + name}, nil
}

// Check mimics the argument checks of Call.
func (f *FakeCaller) Check(name string, args map[string]json.RawMessage) error {
	if string(args["timeoutMs"]) == `"bad"` {
		return &tools.ArgError{Message: "timeoutMs must be an integer string between 1 and 60000"}
	}
	if !isKnownTool(name) {
		return &tools.ArgError{Message: "Unknown tool: " + name, Protocol: true}
	}
	return nil
}

// CancelledCount returns how many batches saw their ctx cancelled.
func (f *FakeCaller) CancelledCount() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.cancelled
}

func isKnownTool(name string) bool {
	return slices.Contains(tools.Names(), name)
}
