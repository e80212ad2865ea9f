package fakeagent

import (
	"bytes"
	"encoding/json"
	"errors"
	"strings"
)

// Object is a JSON object that keeps its members' order, used to edit reply
// payloads without reordering them.
type Object []Member

// Member is one key and its raw JSON value.
type Member struct {
	Key   string
	Value json.RawMessage
}

// ParseObject parses a JSON object keeping member order.
func ParseObject(s string) (Object, error) {
	dec := json.NewDecoder(strings.NewReader(s))
	dec.UseNumber()
	t, err := dec.Token()
	if err != nil {
		return nil, err
	}
	if d, ok := t.(json.Delim); !ok || d != '{' {
		return nil, errors.New("not a JSON object")
	}
	var o Object
	for dec.More() {
		kt, err := dec.Token()
		if err != nil {
			return nil, err
		}
		key, _ := kt.(string)
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return nil, err
		}
		o = append(o, Member{Key: key, Value: v})
	}
	if _, err := dec.Token(); err != nil {
		return nil, err
	}
	return o, nil
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

// Set replaces the value of key in place, or appends it.
func (o Object) Set(key, rawJSON string) Object {
	out := append(Object(nil), o...)
	for i := range out {
		if out[i].Key == key {
			out[i].Value = json.RawMessage(rawJSON)
			return out
		}
	}
	return append(out, Member{Key: key, Value: json.RawMessage(rawJSON)})
}

// Delete removes key.
func (o Object) Delete(key string) Object {
	var out Object
	for _, m := range o {
		if m.Key != key {
			out = append(out, m)
		}
	}
	return out
}

// String renders the object compactly, keys escaped like the agent does.
func (o Object) String() string {
	var b bytes.Buffer
	b.WriteByte('{')
	for i, m := range o {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(`"` + Escape(m.Key) + `":`)
		b.Write(m.Value)
	}
	b.WriteByte('}')
	return b.String()
}
