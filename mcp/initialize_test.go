package mcp

import (
	"encoding/json"
	"testing"
)

// TestInitializeResultShape: the initialize result is exactly
// {protocolVersion, capabilities:{tools:{}}, serverInfo:{name, version}}, with
// no instructions field (mcp-server.md §2.3).
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
		"capabilities":    `{"tools":{}}`,
		"serverInfo":      `{"name":"buildguard","version":"dev"}`,
	}
	for k, v := range resp.Result {
		if want[k] != string(v) {
			t.Errorf("result.%s = %s, want %q", k, v, want[k])
		}
	}
	if len(resp.Result) != len(want) {
		t.Errorf("result has %d members, want %d: %s", len(resp.Result), len(want), out)
	}
}
