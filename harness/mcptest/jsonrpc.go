package mcptest

import (
	"bytes"
	"encoding/json"
	"io"
	"testing"
	"unicode/utf8"

	"github.com/hashicorp/go-hclog"
)

// TestLogger logs at warn level (the default of `buildguard mcp`) into w.
func TestLogger(w io.Writer) hclog.Logger {
	return hclog.New(&hclog.LoggerOptions{Name: "mcp", Level: hclog.Warn, Output: w, Color: hclog.ColorOff})
}

// AssertOnlyJSONRPC checks that out is nothing but JSON-RPC responses: one
// compact object per line with jsonrpc "2.0", an id member, and exactly one
// of result or error; an error never has code 0 or data.
func AssertOnlyJSONRPC(t testing.TB, out []byte) {
	t.Helper()
	if len(out) == 0 {
		return
	}
	if out[len(out)-1] != '\n' {
		t.Errorf("output does not end with a newline: %q", out)
	}
	if !utf8.Valid(out) {
		t.Errorf("output is not valid UTF-8: %q", out)
	}
	for _, line := range bytes.Split(bytes.TrimSuffix(out, []byte("\n")), []byte("\n")) {
		var compact bytes.Buffer
		if err := json.Compact(&compact, line); err != nil || !bytes.Equal(compact.Bytes(), line) {
			t.Errorf("not one compact JSON value: %q", line)
			continue
		}
		var m map[string]json.RawMessage
		if err := json.Unmarshal(line, &m); err != nil {
			t.Errorf("not a JSON object: %q", line)
			continue
		}
		_, hasID := m["id"]
		_, hasResult := m["result"]
		errRaw, hasError := m["error"]
		if string(m["jsonrpc"]) != `"2.0"` || !hasID || hasResult == hasError || len(m) != 3 {
			t.Errorf("not a JSON-RPC response: %s", line)
		}
		if !bytes.HasPrefix(line, []byte(`{"jsonrpc":"2.0","id":`)) {
			t.Errorf("keys not in jsonrpc, id order: %s", line)
		}
		if hasError {
			var e map[string]json.RawMessage
			_ = json.Unmarshal(errRaw, &e)
			// Only -32022 (a 2026-07-28 request's unknown version) has data:
			// the versions served.
			withData := string(e["code"]) == "-32022" && e["data"] != nil
			if string(e["code"]) == "0" || (e["data"] != nil && !withData) || len(e) != map[bool]int{false: 2, true: 3}[withData] {
				t.Errorf("error object must be {code≠0, message} (and data only for -32022): %s", line)
			}
		}
	}
}

// JSONEqual compares two JSON texts by value.
func JSONEqual(t testing.TB, a, b []byte) bool {
	t.Helper()
	var x, y any
	if json.Unmarshal(a, &x) != nil || json.Unmarshal(b, &y) != nil {
		return false
	}
	xa, _ := json.Marshal(x)
	ya, _ := json.Marshal(y)
	return bytes.Equal(xa, ya)
}
