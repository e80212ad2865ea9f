package httpfront_test

import (
	"bytes"
	"encoding/json"
	"flag"
	"io"
	"testing"
	"unicode/utf8"

	"github.com/hashicorp/go-hclog"
)

// testToken is the token the tests serve with.
const testToken = "test-token-0123456789abcdef"

var update = flag.Bool("update", false, "rewrite the expected responses of the testdata/http/*.txtar transcripts")

// testLogger logs at warn level (the default of `buildguard mcp`) into w.
func testLogger(w io.Writer) hclog.Logger {
	return hclog.New(&hclog.LoggerOptions{Name: "mcp", Level: hclog.Warn, Output: w, Color: hclog.ColorOff})
}

// assertOnlyJSONRPC checks that out is nothing but JSON-RPC responses: one
// compact object per line with jsonrpc "2.0", an id member, and exactly one
// of result or error; an error never has code 0 or data.
func assertOnlyJSONRPC(t *testing.T, out []byte) {
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
