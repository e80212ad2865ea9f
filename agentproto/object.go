package agentproto

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"unicode/utf8"
)

// Object is a JSON object that keeps its members in the order they were
// received. The agent's DOCTOR and VERIFY payloads are passed through to tool
// results as received (extra fields included), so they are held in this form.
type Object []Member

// Member is one name/value pair of an Object.
type Member struct {
	Key   string
	Value json.RawMessage
}

// ParseObject decodes data, which must be exactly one JSON object (strict
// JSON, nothing but whitespace around it). Member values are sub-slices of
// data; the caller must not modify data afterwards.
func ParseObject(data []byte) (Object, error) {
	if !json.Valid(data) {
		return nil, errors.New("decoding JSON object: not valid JSON")
	}
	// data is valid JSON from here on, so the scan below only has to find
	// the extent of each member; it never has to reject anything but a
	// non-object.
	i := skipSpace(data, 0)
	if data[i] != '{' {
		return nil, errors.New("decoding JSON object: not an object")
	}
	obj := Object{}
	i = skipSpace(data, i+1)
	for data[i] != '}' {
		end := stringEnd(data, i)
		key, err := unquote(data[i:end])
		if err != nil {
			return nil, fmt.Errorf("decoding JSON object: %w", err)
		}
		i = skipSpace(data, end)
		i = skipSpace(data, i+1) // ':'
		vEnd := valueEnd(data, i)
		obj = obj.Set(key, json.RawMessage(data[i:vEnd]))
		i = skipSpace(data, vEnd)
		if data[i] == ',' {
			i = skipSpace(data, i+1)
		}
	}
	return obj, nil
}

func skipSpace(data []byte, i int) int {
	for i < len(data) && (data[i] == ' ' || data[i] == '\t' || data[i] == '\n' || data[i] == '\r') {
		i++
	}
	return i
}

// stringEnd returns the index just past the JSON string starting at i.
func stringEnd(data []byte, i int) int {
	for j := i + 1; j < len(data); j++ {
		switch data[j] {
		case '\\':
			j++
		case '"':
			return j + 1
		}
	}
	return len(data)
}

// valueEnd returns the index just past the JSON value starting at i.
func valueEnd(data []byte, i int) int {
	switch data[i] {
	case '"':
		return stringEnd(data, i)
	case '{', '[':
		depth := 0
		for j := i; j < len(data); j++ {
			switch data[j] {
			case '"':
				j = stringEnd(data, j) - 1
			case '{', '[':
				depth++
			case '}', ']':
				if depth--; depth == 0 {
					return j + 1
				}
			}
		}
		return len(data)
	}
	j := i
	for j < len(data) && !strings.ContainsRune(",}] \t\n\r", rune(data[j])) {
		j++
	}
	return j
}

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
