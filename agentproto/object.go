package agentproto

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
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
// JSON, nothing but whitespace after it).
func ParseObject(data []byte) (Object, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	tok, err := dec.Token()
	if err != nil {
		return nil, fmt.Errorf("decoding JSON object: %w", err)
	}
	if d, ok := tok.(json.Delim); !ok || d != '{' {
		return nil, errors.New("decoding JSON object: not an object")
	}
	obj := Object{}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, fmt.Errorf("decoding JSON object: %w", err)
		}
		key, ok := tok.(string)
		if !ok {
			return nil, errors.New("decoding JSON object: member name is not a string")
		}
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return nil, fmt.Errorf("decoding JSON object member %q: %w", key, err)
		}
		obj = obj.Set(key, v)
	}
	if _, err := dec.Token(); err != nil {
		return nil, fmt.Errorf("decoding JSON object: %w", err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, errors.New("decoding JSON object: trailing data after the object")
	}
	return obj, nil
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
	var s string
	if err := json.Unmarshal(raw, &s); err != nil {
		return "", false
	}
	return s, true
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
