package protocol

import (
	"encoding/json"
	"strings"
	"testing"
)

// forward parses frame and returns what Forward gives for it.
func forward(t *testing.T, frame string) (json.RawMessage, *Refusal) {
	t.Helper()
	m, rerr := Parse([]byte(frame))
	if rerr != nil {
		t.Fatalf("Parse(%s): %s", frame, rerr.Encode())
	}
	params, _, _, rerr := m.Forward()
	return params, rerr
}

// TestProgressTokenIsAStringOrAnInteger: only a string or an integer
// progressToken is kept (docs/safe-build.md#5); null, booleans, objects and
// fractions are no token, so the call is answered without progress.
func TestProgressTokenIsAStringOrAnInteger(t *testing.T) {
	for tok, kept := range map[string]bool{
		`"p1"`: true, `7`: true, `-3`: true, `0`: true,
		`null`: false, `true`: false, `false`: false, `{}`: false, `[]`: false, `1.5`: false, `1e3`: false,
	} {
		params, rerr := forward(t, `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"x","_meta":{"progressToken":`+tok+`}}}`)
		if rerr != nil {
			t.Fatalf("%s: %s", tok, rerr.Encode())
		}
		has := strings.Contains(string(params), "progressToken")
		if has != kept {
			t.Errorf("progressToken %s: forwarded %s, want the token kept: %v", tok, params, kept)
		}
	}
}

// TestDeepParamsAreInvalidParams: params nesting deeper than
// MaxParamsDepth are -32602 before anything decodes them; at the bound
// they pass.
func TestDeepParamsAreInvalidParams(t *testing.T) {
	nest := func(n int) string { return strings.Repeat(`{"a":`, n) + "1" + strings.Repeat("}", n) }
	// params (1) > arguments (2) > n more levels.
	_, rerr := forward(t, `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"x","arguments":`+nest(MaxParamsDepth-1)+`}}`)
	if rerr != nil {
		t.Errorf("params %d deep: %s", MaxParamsDepth, rerr.Encode())
	}
	for _, n := range []int{MaxParamsDepth, 998, 5000} {
		_, rerr = forward(t, `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"x","arguments":`+nest(n)+`}}`)
		want := `{"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"params must not nest deeper than 64 levels"}}`
		if rerr == nil || string(rerr.Encode()) != want {
			t.Errorf("arguments %d deep: %v, want %s", n, rerr, want)
		}
	}
}

func TestDepth(t *testing.T) {
	for v, want := range map[string]int{
		`1`: 0, `"{["`: 0, `{}`: 1, `[[],[[]]]`: 3, `{"a":"}}}\"{{{{","b":[{}]}`: 3, `["\\",[1]]`: 2,
	} {
		if got := Depth([]byte(v)); got != want {
			t.Errorf("Depth(%s) = %d, want %d", v, got, want)
		}
	}
}
