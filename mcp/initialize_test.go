package mcp

import (
	"encoding/json"
	"strings"
	"testing"
)

// TestInitializeResultShape: the initialize result is exactly
// {protocolVersion, capabilities:{tools:{}}, serverInfo:{name, version},
// instructions}. The instructions (one paragraph teaching the safe loop) are
// buildguard's addition to the Java server's shape (docs/mcp-server.md#2.3).
func TestInitializeResultShape(t *testing.T) {
	t.Parallel()
	out := serveAll(t, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18"}}`+"\n")
	var resp struct {
		Result map[string]json.RawMessage `json:"result"`
	}
	if err := json.Unmarshal([]byte(out), &resp); err != nil {
		t.Fatalf("%q: %v", out, err)
	}
	want := map[string]string{
		"protocolVersion": `"2025-06-18"`,
		"capabilities":    `{"resources":{},"tools":{}}`,
		"serverInfo":      `{"name":"buildguard","version":"dev"}`,
	}
	for k, v := range want {
		if string(resp.Result[k]) != v {
			t.Errorf("result.%s = %s, want %s", k, resp.Result[k], v)
		}
	}
	var instructions string
	if err := json.Unmarshal(resp.Result["instructions"], &instructions); err != nil {
		t.Fatalf("instructions: %v in %s", err, out)
	}
	if instructions != Instructions || strings.Contains(instructions, "\n") {
		t.Errorf("instructions = %q, want the one-paragraph Instructions", instructions)
	}
	// The safe loop, in order: doctor, build started, compile, build ok/failed, verify, exercise.
	last := -1
	for _, step := range []string{"reclazz_doctor", "started", "compile", "ok", "failed", "reclazz_verify", "exercise the application"} {
		i := strings.Index(instructions[last+1:], step)
		if i < 0 {
			t.Fatalf("instructions lack %q after position %d: %q", step, last, instructions)
		}
		last += 1 + i
	}
	if len(resp.Result) != len(want)+1 {
		t.Errorf("result has %d members, want %d: %s", len(resp.Result), len(want)+1, out)
	}
}
