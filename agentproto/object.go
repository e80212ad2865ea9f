package agentproto

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"unicode/utf8"
)

// Object is a JSON object that keeps its members in the order they were
// received or set: the one ordered JSON object of buildguard. The agent's
// DOCTOR and VERIFY payloads are passed through to tool results as received
// (extra fields included), so they are held in this form; tool results, input
// schemas and the fake agent's payload edits are built with it too.
type Object []Member

// Member is one name/value pair of an Object.
type Member struct {
	Key   string
	Value json.RawMessage
}

// ParseObject decodes data, which must be exactly one JSON object (strict
// JSON, nothing but whitespace around it). Member values are sub-slices of
// data; the caller must not modify data afterwards. It validates and splits
// the object in one pass: encoding/json's Valid alone took longer than all
// the rest of a VERIFY reply's handling. Like encoding/json it accepts
// invalid UTF-8 inside strings. Objects and arrays nest at most MaxDepth
// levels deep; deeper JSON is not valid agent JSON.
func ParseObject(data []byte) (Object, error) {
	i := skipSpace(data, 0)
	if i == len(data) || data[i] != '{' {
		if end := scanValue(data, i, 0); end >= 0 && skipSpace(data, end) == len(data) {
			return nil, errors.New("decoding JSON object: not an object")
		}
		return nil, errors.New("decoding JSON object: not valid JSON")
	}
	obj := Object{}
	var keyErr error
	end := scanObject(data, i, 1, func(key, value []byte) {
		k, err := unquote(key)
		if err != nil && keyErr == nil {
			keyErr = err
		}
		obj = obj.Set(k, json.RawMessage(value))
	})
	if end < 0 || skipSpace(data, end) != len(data) {
		return nil, errors.New("decoding JSON object: not valid JSON")
	}
	if keyErr != nil {
		return nil, fmt.Errorf("decoding JSON object: %w", keyErr)
	}
	return obj, nil
}

// MaxDepth is how deep agent JSON may nest objects and arrays, the outermost
// object counting one: a line or payload nested deeper is malformed, a
// protocol error like any other invalid line (docs/decisions.md#D13).
const MaxDepth = 64

func skipSpace(data []byte, i int) int {
	for i < len(data) && (data[i] == ' ' || data[i] == '\t' || data[i] == '\n' || data[i] == '\r') {
		i++
	}
	return i
}

// scanValue returns the index just past the JSON value that starts at
// data[i], or -1 when no valid value starts there. depth is the number of
// objects and arrays around it.
func scanValue(data []byte, i, depth int) int {
	if i >= len(data) {
		return -1
	}
	switch c := data[i]; {
	case c == '"':
		return scanString(data, i)
	case c == '{':
		return scanObject(data, i, depth+1, nil)
	case c == '[':
		return scanArray(data, i, depth+1)
	case c == 't':
		return scanLiteral(data, i, "true")
	case c == 'f':
		return scanLiteral(data, i, "false")
	case c == 'n':
		return scanLiteral(data, i, "null")
	case c == '-' || c >= '0' && c <= '9':
		return scanNumber(data, i)
	}
	return -1
}

// scanObject returns the index just past the object that starts at data[i]
// ('{'), or -1. member, when not nil, gets each member's key literal and
// value, in order.
func scanObject(data []byte, i, depth int, member func(key, value []byte)) int {
	return scanSequence(data, i, depth, '}', func(k int) int {
		if k >= len(data) || data[k] != '"' {
			return -1
		}
		kEnd := scanString(data, k)
		if kEnd < 0 {
			return -1
		}
		v := skipSpace(data, kEnd)
		if v >= len(data) || data[v] != ':' {
			return -1
		}
		v = skipSpace(data, v+1)
		vEnd := scanValue(data, v, depth)
		if vEnd >= 0 && member != nil {
			member(data[k:kEnd], data[v:vEnd])
		}
		return vEnd
	})
}

// scanArray returns the index just past the array that starts at data[i]
// ('['), or -1.
func scanArray(data []byte, i, depth int) int {
	return scanSequence(data, i, depth, ']', func(j int) int { return scanValue(data, j, depth) })
}

// scanSequence scans the object or array whose opening bracket is at
// data[i]: elements separated by commas, up to and past the closing bracket
// end. element scans the element that starts at j and returns the index
// just past it, or -1.
func scanSequence(data []byte, i, depth int, end byte, element func(j int) int) int {
	if depth > MaxDepth {
		return -1
	}
	i = skipSpace(data, i+1)
	if i < len(data) && data[i] == end {
		return i + 1
	}
	for {
		if i = element(i); i < 0 {
			return -1
		}
		i = skipSpace(data, i)
		if i >= len(data) {
			return -1
		}
		switch data[i] {
		case ',':
			i = skipSpace(data, i+1)
		case end:
			return i + 1
		default:
			return -1
		}
	}
}

// scanString returns the index just past the string that starts at data[i]
// ('"'), or -1: a control character, a bad escape or no closing quote.
func scanString(data []byte, i int) int {
	for j := i + 1; j < len(data); j++ {
		switch c := data[j]; {
		case c == '"':
			return j + 1
		case c == '\\':
			j++
			if j >= len(data) {
				return -1
			}
			switch data[j] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
			case 'u':
				if j+4 >= len(data) {
					return -1
				}
				for _, h := range data[j+1 : j+5] {
					if !isHex(h) {
						return -1
					}
				}
				j += 4
			default:
				return -1
			}
		case c < 0x20:
			return -1
		}
	}
	return -1
}

// scanNumber returns the index just past the number that starts at data[i],
// or -1.
func scanNumber(data []byte, i int) int {
	if data[i] == '-' {
		i++
	}
	switch {
	case i >= len(data):
		return -1
	case data[i] == '0':
		i++
	case data[i] >= '1' && data[i] <= '9':
		i = skipDigits(data, i)
	default:
		return -1
	}
	if i < len(data) && data[i] == '.' {
		if i++; i >= len(data) || !isDigit(data[i]) {
			return -1
		}
		i = skipDigits(data, i)
	}
	if i < len(data) && (data[i] == 'e' || data[i] == 'E') {
		if i++; i < len(data) && (data[i] == '+' || data[i] == '-') {
			i++
		}
		if i >= len(data) || !isDigit(data[i]) {
			return -1
		}
		i = skipDigits(data, i)
	}
	return i
}

func scanLiteral(data []byte, i int, lit string) int {
	if !bytes.HasPrefix(data[i:], []byte(lit)) {
		return -1
	}
	return i + len(lit)
}

func skipDigits(data []byte, i int) int {
	for i < len(data) && isDigit(data[i]) {
		i++
	}
	return i
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

func isHex(c byte) bool { return isDigit(c) || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F' }

// unquote decodes a JSON string literal, without allocation beyond the
// result when it holds no escapes.
func unquote(lit []byte) (string, error) {
	if bytes.IndexByte(lit, '\\') < 0 && utf8.Valid(lit) {
		return string(lit[1 : len(lit)-1]), nil
	}
	var s string
	err := json.Unmarshal(lit, &s)
	return s, err
}

// Get returns the raw value of key.
func (o Object) Get(key string) (json.RawMessage, bool) {
	for _, m := range o {
		if m.Key == key {
			return m.Value, true
		}
	}
	return nil, false
}

// String returns the value of key when it is a JSON string.
func (o Object) String(key string) (string, bool) {
	raw, ok := o.Get(key)
	if !ok || len(raw) == 0 || raw[0] != '"' {
		return "", false
	}
	s, err := unquote(raw)
	return s, err == nil
}

// Bool returns the value of key when it is a JSON boolean.
func (o Object) Bool(key string) (value, ok bool) {
	raw, found := o.Get(key)
	switch {
	case !found:
		return false, false
	case string(raw) == "true":
		return true, true
	case string(raw) == "false":
		return false, true
	}
	return false, false
}

// Set returns o with key set to value: replaced in place when present (a
// duplicate name in the input keeps its first position and last value, as
// JSON decoders do), appended otherwise.
func (o Object) Set(key string, value json.RawMessage) Object {
	for i := range o {
		if o[i].Key == key {
			o[i].Value = value
			return o
		}
	}
	return append(o, Member{Key: key, Value: value})
}

// SetValue is Set with a Go value encoded as JSON.
func (o Object) SetValue(key string, v any) (Object, error) {
	raw, err := json.Marshal(v)
	if err != nil {
		return o, fmt.Errorf("encoding %q: %w", key, err)
	}
	return o.Set(key, raw), nil
}

// Clone returns a copy of o that shares no member slice with it.
func (o Object) Clone() Object {
	return append(Object(nil), o...)
}

// MarshalJSON encodes o compactly with its members in order.
func (o Object) MarshalJSON() ([]byte, error) {
	var buf bytes.Buffer
	buf.WriteByte('{')
	for i, m := range o {
		if i > 0 {
			buf.WriteByte(',')
		}
		k, err := json.Marshal(m.Key)
		if err != nil {
			return nil, err
		}
		buf.Write(k)
		buf.WriteByte(':')
		if err := json.Compact(&buf, m.Value); err != nil {
			return nil, fmt.Errorf("encoding member %q: %w", m.Key, err)
		}
	}
	buf.WriteByte('}')
	return buf.Bytes(), nil
}
