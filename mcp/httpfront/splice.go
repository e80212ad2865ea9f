package httpfront

import (
	"bytes"
	"encoding/json"
	"sync/atomic"
)

// sdkResultPrefix starts every successful answer go-sdk encodes.
const sdkResultPrefix = `{"jsonrpc":"2.0","id":`

// spliceResult is protocol.EncodeResponse of the SDK's successful answer
// body, without decoding it: when body is {"jsonrpc":"2.0","id":TOKEN,
// "result":R} with TOKEN one of this handler's plain id tokens and R valid
// and compact (go-sdk encodes with encoding/json, whose output is), the
// answer is the same frame with the client's id literal. Anything else
// (an error, another shape) is not spliced: relay decodes and re-encodes
// it. A tools/list answer of 24 KB is then scanned once instead of being
// decoded, compacted and copied, and not even scanned when it is the same
// bytes as one memo already proved compact (docs/performance.md#2).
func spliceResult(id json.RawMessage, body []byte, memo *compactMemo) ([]byte, bool) {
	body = bytes.TrimRight(body, " \t\r\n")
	rest, ok := bytes.CutPrefix(body, []byte(sdkResultPrefix))
	if !ok || len(rest) == 0 || rest[len(rest)-1] != '}' {
		return nil, false
	}
	tok, result, ok := bytes.Cut(rest[:len(rest)-1], []byte(`,"result":`))
	if !ok || !plainToken(tok) || len(result) == 0 || !memo.compactJSON(result) {
		return nil, false
	}
	if len(id) == 0 {
		id = json.RawMessage("null")
	}
	out := make([]byte, 0, len(sdkResultPrefix)+len(id)+len(result)+12)
	out = append(out, sdkResultPrefix...)
	out = append(out, id...)
	out = append(out, `,"result":`...)
	out = append(out, result...)
	return append(out, '}'), true
}

// memoMinSize and memoMaxSize bound the results compactMemo keeps: below,
// a scan costs little more than the comparison; above, a result is no
// answer that repeats (a build log read back is up to 8 MiB) and keeping
// four of them would hold their memory for nothing.
const (
	memoMinSize = 4 << 10
	memoMaxSize = 256 << 10
)

// compactMemo keeps the last few large results compactJSON proved compact.
// A result that never changes (tools/list in one version's shape, about
// 20 KB) is then compared byte for byte with one it holds instead of being
// scanned again, and holds for the same reason: a comparison of memory
// costs a fraction of a JSON scan (docs/performance.md#2).
// The zero value is ready; it is safe for concurrent use.
type compactMemo struct {
	slots [4]atomic.Pointer[[]byte]
	next  atomic.Uint32
}

// compactJSON is compactJSON(v), answered from the memo when it holds v.
func (m *compactMemo) compactJSON(v []byte) bool {
	if m == nil || len(v) < memoMinSize || len(v) > memoMaxSize {
		return compactJSON(v)
	}
	for i := range m.slots {
		if p := m.slots[i].Load(); p != nil && bytes.Equal(*p, v) {
			return true
		}
	}
	if !compactJSON(v) {
		return false
	}
	kept := bytes.Clone(v)
	m.slots[m.next.Add(1)%uint32(len(m.slots))].Store(&kept)
	return true
}

// compactJSON: v is valid JSON with no white space outside its strings, so
// json.Compact would return it unchanged.
func compactJSON(v []byte) bool {
	if !json.Valid(v) {
		return false
	}
	inString, escaped := false, false
	for _, c := range v {
		switch {
		case escaped:
			escaped = false
		case inString && c == '\\':
			escaped = true
		case c == '"':
			inString = !inString
		case !inString && (c == ' ' || c == '\t' || c == '\n' || c == '\r'):
			return false
		}
	}
	return true
}

// plainToken: a JSON string of letters, digits, '-' and '_', or digits:
// the id literals this handler gives the SDK, which cannot hide a member.
func plainToken(tok []byte) bool {
	if len(tok) >= 2 && tok[0] == '"' && tok[len(tok)-1] == '"' {
		tok = tok[1 : len(tok)-1]
	}
	if len(tok) == 0 {
		return false
	}
	for _, c := range tok {
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c == '-' || c == '_') {
			return false
		}
	}
	return true
}
