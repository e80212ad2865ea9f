package httpfront_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

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
//
// It copies package mcp's fakeCaller, which a test outside package mcp
// cannot import, with what the HTTP tests use.
type fakeCaller struct {
	release chan tools.Result // nil: a batch blocks until cancelled

	mu        sync.Mutex
	started   chan string // optional: receives the tool name when a call starts
	cancelled int         // batches that saw their ctx cancelled
}

// awaitStart waits, at most 10 s, until a call started, and returns the
// tool's name.
func (f *fakeCaller) awaitStart(t *testing.T) string {
	t.Helper()
	select {
	case name := <-f.started:
		return name
	case <-time.After(10 * time.Second):
		t.Fatal("no tool call started within 10 s")
		return ""
	}
}

func (f *fakeCaller) Call(ctx context.Context, name string, args map[string]json.RawMessage) (tools.Result, error) {
	if f.started != nil {
		f.started <- name
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
	if name == tools.ToolVerifyBatch {
		select {
		case <-ctx.Done():
			f.mu.Lock()
			f.cancelled++
			f.mu.Unlock()
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

func (f *fakeCaller) cancelledCount() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.cancelled
}

func isKnownTool(name string) bool {
	for _, n := range tools.Names() {
		if n == name {
			return true
		}
	}
	return false
}
