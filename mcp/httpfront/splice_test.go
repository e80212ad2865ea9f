package httpfront

import (
	"encoding/json"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"

	"github.com/buildguard/buildguard/mcp/protocol"
)

// TestSpliceResultIsEncodeResponse: whenever spliceResult answers, its bytes
// are what decoding the SDK's frame and protocol.EncodeResponse give; frames
// it cannot prove compact, errors and other shapes go the long way.
func TestSpliceResultIsEncodeResponse(t *testing.T) {
	results := []any{
		map[string]any{"tools": []any{map[string]any{"name": "reclazz_status", "description": "a \"quoted\" text, with spaces: <b> & \\ \u2028 é"}}},
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
				got, ok := spliceResult(id, body)
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
		if got, ok := spliceResult(json.RawMessage(`1`), []byte(body)); ok {
			t.Errorf("spliced %s into %s", body, got)
		}
	}
}
