package hostconfig

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/tailscale/hujson"

	"github.com/buildguard/buildguard/internal/boundedfile"
)

// jsonSyntax reads, checks and edits the JSON and JSONC files of every host
// but Codex.
type jsonSyntax struct{}

func (jsonSyntax) edit(old []byte, container string, e Entry) ([]byte, error) {
	return editJSON(old, container, e)
}

// decode returns the data of the JSONC document b, its numbers as
// json.Number; an empty document is an empty object.
func (jsonSyntax) decode(b []byte) (map[string]any, error) {
	doc := map[string]any{}
	if len(bytes.TrimSpace(b)) == 0 {
		return doc, nil
	}
	std, err := hujson.Standardize(bytes.Clone(bytes.TrimPrefix(b, bom)))
	if err != nil {
		return nil, err
	}
	dec := json.NewDecoder(bytes.NewReader(std))
	dec.UseNumber()
	return doc, dec.Decode(&doc)
}

// readJSON reads a JSON file that init does not edit (a host's settings)
// with the bound and the checks of every host file (docs/decisions.md#D13).
func readJSON(path string) (map[string]any, error) {
	b, err := boundedfile.ReadFile(path, boundedfile.ConfigLimit)
	if err != nil {
		return nil, err
	}
	if _, err := parseJSON(b); err != nil {
		return nil, err
	}
	doc, err := jsonSyntax{}.decode(b)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrSyntax, err)
	}
	return doc, nil
}

// parseJSON returns the syntax tree of b after the checks every JSON file
// passes before anything decodes it: valid UTF-8, nesting within maxDepth,
// valid JSONC, no key named twice in an object.
func parseJSON(b []byte) (hujson.Value, error) {
	if !utf8.Valid(b) {
		return hujson.Value{}, ErrInvalidUTF8
	}
	if err := checkDepth(b); err != nil {
		return hujson.Value{}, err
	}
	v, err := hujson.Parse(b)
	if err != nil {
		return hujson.Value{}, fmt.Errorf("%w as JSON: %v", ErrSyntax, strings.TrimPrefix(err.Error(), "hujson: "))
	}
	if err := checkDuplicates(&v, ""); err != nil {
		return hujson.Value{}, err
	}
	return v, nil
}

// editJSON sets the owned fields of container.buildguard in the JSON or
// JSONC document old and returns the new document; it returns old itself
// when nothing changes. The edit works on hujson's exact syntax tree:
// members are replaced or appended, each with the indentation of its
// siblings, and every other byte, comment and trailing comma is packed
// back as it was (docs/decisions.md#D13). Refusals wrap the Err… values.
func editJSON(old []byte, container string, e Entry) ([]byte, error) {
	if !utf8.Valid(old) {
		return nil, ErrInvalidUTF8
	}
	if rest, ok := bytes.CutPrefix(old, bom); ok {
		// A byte order mark (some Windows editors write one) stays in front.
		out, err := editJSON(rest, container, e)
		if err != nil || bytes.Equal(out, rest) {
			return old, err
		}
		return append(bytes.Clone(bom), out...), nil
	}
	if len(bytes.TrimSpace(old)) == 0 {
		var b strings.Builder
		writeValue(&b, []field{{container, []field{{EntryName, e.fields()}}}}, "", "  ", true)
		b.WriteByte('\n')
		return []byte(b.String()), nil
	}
	v, err := parseJSON(old)
	if err != nil {
		return nil, err
	}
	root, ok := v.Value.(*hujson.Object)
	if !ok {
		return nil, fmt.Errorf("%w: the whole file", ErrNotObject)
	}
	pack := func() []byte { return sameLineEnds(old, v.Pack()) }
	unit := indentUnit(root)
	rootL := layoutOf(root, "", unit, true)
	i := memberIndex(root, container)
	if i < 0 {
		appendMember(root, rootL, unit, field{container, []field{{EntryName, e.fields()}}})
		return pack(), nil
	}
	servers, ok := root.Members[i].Value.Value.(*hujson.Object)
	if !ok {
		return nil, fmt.Errorf("%w: its %s member", ErrNotObject, container)
	}
	serversL := layoutOf(servers, rootL.indent, unit, rootL.multiline)
	j := memberIndex(servers, EntryName)
	if j < 0 {
		appendMember(servers, serversL, unit, field{EntryName, e.fields()})
		return pack(), nil
	}
	entry, ok := servers.Members[j].Value.Value.(*hujson.Object)
	if !ok {
		return nil, fmt.Errorf("%w: its %s.%s member", ErrNotObject, container, EntryName)
	}
	entryL := layoutOf(entry, serversL.indent, unit, serversL.multiline)
	changed := false
	for _, f := range e.fields() {
		k := memberIndex(entry, f.key)
		switch {
		case k < 0:
			appendMember(entry, entryL, unit, f)
		case !literalEqual(entry.Members[k].Value.Value, f.value):
			var b strings.Builder
			writeValue(&b, f.value, entryL.indent, unit, false)
			nv, err := hujson.Parse([]byte(b.String()))
			if err != nil {
				panic(fmt.Sprintf("hostconfig: rendering %s: %v", f.key, err))
			}
			entry.Members[k].Value.Value = nv.Value
		default:
			continue
		}
		changed = true
	}
	if !changed {
		return old, nil
	}
	return pack(), nil
}

// sameLineEnds gives the lines the edit added CRLF ends when every line of
// old ends so. JSON strings hold no raw newline, so in such a file every
// bare LF of out is one the edit wrote.
func sameLineEnds(old, out []byte) []byte {
	if !bytes.Contains(old, []byte("\r\n")) || bytes.Count(old, []byte("\n")) != bytes.Count(old, []byte("\r\n")) {
		return out
	}
	var b bytes.Buffer
	for i, c := range out {
		if c == '\n' && (i == 0 || out[i-1] != '\r') {
			b.WriteByte('\r')
		}
		b.WriteByte(c)
	}
	return b.Bytes()
}

// bom is the UTF-8 byte order mark.
var bom = []byte("\ufeff")

// maxDepth is the deepest nesting of objects and arrays a JSON config may
// have. hujson's parser recurses once per level, so a 1 MiB file of "["
// would overflow the stack; real configs nest a handful of levels.
const maxDepth = 100

// checkDepth refuses a document nested deeper than maxDepth before it is
// parsed. It skips strings and comments as the JSONC grammar defines them;
// anything else malformed is left to the parser.
func checkDepth(b []byte) error {
	depth := 0
	for i := 0; i < len(b); i++ {
		switch b[i] {
		case '"':
			for i++; i < len(b) && b[i] != '"'; i++ {
				if b[i] == '\\' {
					i++
				}
			}
		case '/':
			switch {
			case bytes.HasPrefix(b[i:], []byte("//")):
				k := bytes.IndexByte(b[i:], '\n')
				if k < 0 {
					return nil
				}
				i += k
			case bytes.HasPrefix(b[i:], []byte("/*")):
				k := bytes.Index(b[i+2:], []byte("*/"))
				if k < 0 {
					return nil
				}
				i += 2 + k + 1
			}
		case '[', '{':
			if depth++; depth > maxDepth {
				return fmt.Errorf("%w as JSON: objects and arrays nest deeper than %d levels", ErrSyntax, maxDepth)
			}
		case ']', '}':
			depth--
		}
	}
	return nil
}

// checkDuplicates refuses an object, anywhere in v, that names a key twice:
// hosts disagree about which one counts, so no edit could be right.
func checkDuplicates(v *hujson.Value, path string) error {
	switch t := v.Value.(type) {
	case *hujson.Object:
		seen := make(map[string]bool, len(t.Members))
		for i := range t.Members {
			name := t.Members[i].Name.Value.(hujson.Literal).String()
			if seen[name] {
				return fmt.Errorf("%w: %q in %s", ErrDuplicateKey, name, orRoot(path))
			}
			seen[name] = true
			if err := checkDuplicates(&t.Members[i].Value, path+"."+name); err != nil {
				return err
			}
		}
	case *hujson.Array:
		for i := range t.Elements {
			if err := checkDuplicates(&t.Elements[i], fmt.Sprintf("%s[%d]", path, i)); err != nil {
				return err
			}
		}
	}
	return nil
}

func orRoot(path string) string {
	if path == "" {
		return "the top-level object"
	}
	return strings.TrimPrefix(path, ".")
}

func memberIndex(obj *hujson.Object, key string) int {
	for i, m := range obj.Members {
		if m.Name.Value.(hujson.Literal).String() == key {
			return i
		}
	}
	return -1
}

// literalEqual reports whether the syntax tree value v holds want (a string
// or a []string), whatever its spelling.
func literalEqual(v hujson.ValueTrimmed, want any) bool {
	raw, err := hujson.Standardize(hujson.Value{Value: v}.Pack())
	if err != nil {
		return false
	}
	got := reflect.New(reflect.TypeOf(want))
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if dec.Decode(got.Interface()) != nil {
		return false
	}
	return reflect.DeepEqual(got.Elem().Interface(), want)
}

// layout is how an object lays out its members.
type layout struct {
	// multiline: each member on a line of its own.
	multiline bool
	// indent is the members' indentation when multiline, else the space
	// before each member.
	indent string
	// own is the indentation of the line the object closes on.
	own string
}

// layoutOf reads obj's layout from its last member; an empty object
// follows its parent. own is the indentation of the line obj starts on.
func layoutOf(obj *hujson.Object, own, unit string, parentMultiline bool) layout {
	if n := len(obj.Members); n > 0 {
		before := obj.Members[n-1].Name.BeforeExtra
		if k := bytes.LastIndexByte(before, '\n'); k >= 0 {
			if blank(before[k+1:]) {
				return layout{multiline: true, indent: string(before[k+1:]), own: own}
			}
			return layout{multiline: true, indent: own + unit, own: own}
		}
		if blank(before) {
			return layout{indent: string(before), own: own}
		}
		return layout{indent: " ", own: own}
	}
	if parentMultiline || bytes.IndexByte(obj.AfterExtra, '\n') >= 0 {
		return layout{multiline: true, indent: own + unit, own: own}
	}
	return layout{own: own}
}

func blank(b []byte) bool {
	return len(bytes.Trim(b, " \t")) == 0
}

// indentUnit guesses one level of the file's indentation from the first
// member of the top-level object: two spaces when it tells nothing.
func indentUnit(root *hujson.Object) string {
	if len(root.Members) > 0 {
		before := root.Members[0].Name.BeforeExtra
		if k := bytes.LastIndexByte(before, '\n'); k >= 0 && blank(before[k+1:]) && len(before) > k+1 {
			return string(before[k+1:])
		}
	}
	return "  "
}

// appendMember adds f as the last member of obj in obj's layout. A comment
// that ended the previous last member's line stays on that line; a trailing
// comma stays a trailing comma.
func appendMember(obj *hujson.Object, l layout, unit string, f field) {
	var b strings.Builder
	writeValue(&b, f.value, l.indent, unit, l.multiline)
	val, err := hujson.Parse([]byte(b.String()))
	if err != nil {
		panic(fmt.Sprintf("hostconfig: rendering %s: %v", f.key, err))
	}
	trailingComma, colon := false, []byte(" ")
	if n := len(obj.Members); n > 0 {
		last := obj.Members[n-1]
		trailingComma = last.Value.AfterExtra != nil
		if blank(last.Value.BeforeExtra) {
			colon = append([]byte{}, last.Value.BeforeExtra...)
		}
	}
	sameLine, rest, lineComment := splitSameLine(obj.AfterExtra)
	m := hujson.ObjectMember{
		Name:  hujson.Value{Value: hujson.String(f.key)},
		Value: hujson.Value{BeforeExtra: colon, Value: val.Value},
	}
	if l.multiline {
		m.Name.BeforeExtra = append(append([]byte{}, sameLine...), "\n"+l.indent...)
		if bytes.IndexByte(rest, '\n') < 0 {
			rest = append([]byte("\n"+l.own), rest...)
		}
	} else {
		m.Name.BeforeExtra = append(append([]byte{}, sameLine...), l.indent...)
		if lineComment {
			m.Name.BeforeExtra = append(append([]byte{}, sameLine...), "\n"+l.own+unit...)
		}
		if len(obj.Members) == 0 && len(sameLine) == 0 {
			m.Name.BeforeExtra = nil
		}
	}
	if trailingComma {
		m.Value.AfterExtra = []byte{}
	}
	obj.AfterExtra = append([]byte{}, rest...)
	obj.Members = append(obj.Members, m)
}

// splitSameLine splits the extra before a closing brace into what stays on
// the line of the last member (blanks and comments up to the first
// newline) and the rest.
//
// lineComment reports that sameLine ends in a line comment, so whatever
// follows it must start on a new line.
func splitSameLine(extra []byte) (sameLine, rest []byte, lineComment bool) {
	n := 0
	for n < len(extra) {
		switch c := extra[n]; {
		case c == ' ' || c == '\t':
			n++
		case bytes.HasPrefix(extra[n:], []byte("//")):
			k := bytes.IndexByte(extra[n:], '\n')
			if k < 0 {
				return extra, nil, true
			}
			n += k
			return extra[:n], extra[n:], true
		case bytes.HasPrefix(extra[n:], []byte("/*")):
			k := bytes.Index(extra[n+2:], []byte("*/"))
			if k < 0 || bytes.IndexByte(extra[n:n+2+k], '\n') >= 0 {
				return extra[:n], extra[n:], false
			}
			n += 2 + k + 2
		default:
			return extra[:n], extra[n:], false
		}
	}
	return extra, nil, false
}

// writeValue writes v (a string, a []string or a []field object) as JSON.
// An object is written one member a line, indented from indent by unit,
// when multiline; string arrays always stay on one line.
func writeValue(b *strings.Builder, v any, indent, unit string, multiline bool) {
	switch t := v.(type) {
	case string:
		b.WriteString(quoteJSON(t))
	case int64:
		b.WriteString(strconv.FormatInt(t, 10))
	case []string:
		b.WriteByte('[')
		for i, s := range t {
			if i > 0 {
				b.WriteString(", ")
			}
			b.WriteString(quoteJSON(s))
		}
		b.WriteByte(']')
	case []field:
		b.WriteByte('{')
		for i, f := range t {
			switch {
			case multiline:
				if i > 0 {
					b.WriteByte(',')
				}
				b.WriteString("\n" + indent + unit)
			case i > 0:
				b.WriteString(", ")
			}
			b.WriteString(quoteJSON(f.key) + ": ")
			writeValue(b, f.value, indent+unit, unit, multiline)
		}
		if multiline && len(t) > 0 {
			b.WriteString("\n" + indent)
		}
		b.WriteByte('}')
	default:
		panic(fmt.Sprintf("hostconfig: cannot write %T", v))
	}
}

// quoteJSON quotes s as a JSON string without HTML escaping, so a path
// with & or < reads as it is.
func quoteJSON(s string) string {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(s); err != nil {
		panic(err)
	}
	return strings.TrimSuffix(b.String(), "\n")
}
