package httpfront

import (
	"bytes"
	"encoding/json"
	"strings"
	"sync"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"

	"github.com/buildguard/buildguard/mcp/protocol"
)

// TestSpliceResultIsEncodeResponse: whenever spliceResult answers, its bytes
// are what decoding the SDK's frame and protocol.EncodeResponse give; frames
// it cannot prove compact, errors and other shapes go the long way.
func TestSpliceResultIsEncodeResponse(t *testing.T) {
	memo := &compactMemo{}
	results := []any{
		map[string]any{"tools": []any{map[string]any{"name": "reclazz_status", "description": "a \"quoted\" text, with spaces: <b> & \\ \u2028 é"}}},
		map[string]any{"tools": []any{map[string]any{"name": "large", "description": strings.Repeat("a text with spaces, ", 400)}}},
		map[string]any{},
		[]any{1, 2.5, "x y", nil, true},
		"a string result",
	}
	ids := []json.RawMessage{nil, json.RawMessage(`1.0`), json.RawMessage(`"client id"`), json.RawMessage(`-9`)}
	for _, r := range results {
		raw, err := json.Marshal(r)
		if err != nil {
			t.Fatal(err)
		}
		for _, tok := range []string{`"lt-1"`, `17`, `"abc_DEF-9"`} {
			body := []byte(`{"jsonrpc":"2.0","id":` + tok + `,"result":` + string(raw) + "}\n")
			for _, id := range ids {
				got, ok := spliceResult(id, body, memo)
				if !ok {
					t.Fatalf("not spliced: %s", body)
				}
				msg, err := jsonrpc.DecodeMessage(body)
				if err != nil {
					t.Fatal(err)
				}
				if want := protocol.EncodeResponse(id, msg.(*jsonrpc.Response)); string(got) != string(want) {
					t.Errorf("spliced %s\nwant    %s", got, want)
				}
			}
		}
	}
	for _, body := range []string{
		`{"jsonrpc":"2.0","id":"lt-1","result":{"a": 1}}`,                     // not compact
		`{"jsonrpc":"2.0","id":"lt-1","result":{"a":1},"error":{"code":1}}`,   // a second member
		`{"jsonrpc":"2.0","id":"lt-1","error":{"code":-32603,"message":"x"}}`, // an error
		`{"jsonrpc":"2.0","id":"a\",\"result\":1,\"x","result":{}}`,           // an id that is no token of ours
		`{"jsonrpc":"2.0","id":"lt-1","result":}`,                             // no result
		`{"jsonrpc":"2.0","id":"lt-1","result":{"a":1}`,                       // cut
		`{"id":"lt-1","jsonrpc":"2.0","result":{}}`,                           // another order
		`{"jsonrpc":"2.0","id":"lt-1","result":{"a":"x"}	}`,                   // white space inside the frame
	} {
		if got, ok := spliceResult(json.RawMessage(`1`), []byte(body), memo); ok {
			t.Errorf("spliced %s into %s", body, got)
		}
	}
}

// TestCompactMemo: the memo keeps a large result once it is proved compact
// and answers the same bytes from it; a result it does not hold byte for
// byte is checked in full, so a changed byte, white space or a cut is never
// taken for the kept one, from any number of goroutines at once.
func TestCompactMemo(t *testing.T) {
	good, err := json.Marshal(map[string]any{"tools": strings.Repeat("x y ", 2000), "n": []int{1, 2, 3}})
	if err != nil {
		t.Fatal(err)
	}
	holds := func(m *compactMemo, v []byte) bool {
		for i := range m.slots {
			if p := m.slots[i].Load(); p != nil && bytes.Equal(*p, v) {
				return true
			}
		}
		return false
	}
	m := &compactMemo{}
	bad := [][]byte{
		append(bytes.Clone(good[:len(good)-1]), ' '),              // white space, same length
		append(bytes.Clone(good[:len(good)-1]), ','),              // invalid, same length
		bytes.Replace(good, []byte(`{"n":`), []byte(`{ "n":`), 1), // white space outside strings
		good[:len(good)-1], // cut
	}
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			for range 50 {
				if !m.compactJSON(good) {
					t.Error("a compact result was refused")
					return
				}
				for _, b := range bad {
					if m.compactJSON(b) {
						t.Errorf("taken for compact: %.40q…", b[len(b)-40:])
						return
					}
				}
			}
		})
	}
	wg.Wait()
	if !holds(m, good) {
		t.Error("the memo does not hold the compact result it proved")
	}
	for _, b := range bad {
		if holds(m, b) {
			t.Errorf("the memo holds a refused result %.40q…", b[len(b)-40:])
		}
	}
	small := []byte(`{"a":1}`)
	if !m.compactJSON(small) || holds(m, small) {
		t.Error("a small result is kept, or refused")
	}
	huge, _ := json.Marshal(strings.Repeat("x", memoMaxSize))
	if !m.compactJSON(huge) || holds(m, huge) {
		t.Error("a result larger than memoMaxSize is kept, or refused")
	}
}
