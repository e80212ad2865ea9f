package hostconfig

import (
	"bytes"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/pelletier/go-toml/v2"
	"github.com/pelletier/go-toml/v2/unstable"
)

// tomlSyntax reads, checks and edits Codex's config.toml.
type tomlSyntax struct{}

func (tomlSyntax) edit(old []byte, container string, e Entry) ([]byte, error) {
	return editTOML(old, container, e)
}

// decode returns the data of the TOML document b; an empty document is an
// empty object.
func (tomlSyntax) decode(b []byte) (map[string]any, error) {
	doc := map[string]any{}
	if len(bytes.TrimSpace(b)) == 0 {
		return doc, nil
	}
	return doc, toml.Unmarshal(b, &doc)
}

// editTOML sets command and args (and the tool timeout when e has one) of
// [container.buildguard] in the TOML
// document old and returns the new document; it returns old itself when
// nothing changes. Only byte ranges of our own table change: a value of
// ours that differs is replaced where it stands, a missing one is added
// under the table's header, and a missing table is appended at the end.
// Comments, other tables and every other key (env, cwd, …) stay as they
// were (docs/decisions.md#D13). The positions come from go-toml's parser,
// so a "[" in a string or a comment is never taken for a header.
func editTOML(old []byte, container string, e Entry) ([]byte, error) {
	if err := checkTOML(old, container); err != nil {
		return nil, err
	}
	t, err := scanTOML(old, container, e)
	if err != nil {
		return nil, err
	}
	edits := t.edits(old, container, e)
	if len(edits) == 0 {
		return old, nil
	}
	slices.SortFunc(edits, func(a, b byteEdit) int { return b.start - a.start })
	out := slices.Clone(old)
	for _, ed := range edits {
		out = slices.Concat(out[:ed.start], []byte(ed.text), out[ed.end:])
	}
	return out, nil
}

// checkTOML refuses a document that is not UTF-8, does not parse, names a
// key twice, or has a container or entry that is not a table.
func checkTOML(old []byte, container string) error {
	if !utf8.Valid(old) {
		return ErrInvalidUTF8
	}
	var doc map[string]any
	if err := toml.Unmarshal(old, &doc); err != nil {
		if strings.Contains(err.Error(), "already") {
			return fmt.Errorf("%w: %v", ErrDuplicateKey, err)
		}
		return fmt.Errorf("%w as TOML: %v", ErrSyntax, err)
	}
	servers, ok := doc[container]
	if !ok {
		return nil
	}
	m, isTable := servers.(map[string]any)
	if !isTable {
		return fmt.Errorf("%w: %s is not a table", ErrNotObject, container)
	}
	if entry, ok := m[EntryName]; ok {
		if _, isTable := entry.(map[string]any); !isTable {
			return fmt.Errorf("%w: %s.%s is not a table", ErrNotObject, container, EntryName)
		}
	}
	return nil
}

// tomlTable is where our table and its owned keys stand in a document.
type tomlTable struct {
	// headerEnd is the offset after the line of our [container.buildguard]
	// header, -1 when there is none.
	headerEnd int
	// values maps each owned key present to its value's byte range.
	values map[string][2]int
	// decoded maps each owned key present to its value (nil when it is
	// not a string or a list of strings).
	decoded map[string]any
	// afterOurs is the offset after the line of our last owned key, -1
	// when there is none.
	afterOurs int
}

// scanTOML walks old's expressions with go-toml's parser and finds our
// table; our entry written with dotted keys or as an inline table is
// refused (ErrUnsupported): it has no place to edit in.
func scanTOML(old []byte, container string, e Entry) (tomlTable, error) {
	owned := map[string]bool{}
	for _, f := range e.fields() {
		owned[f.key] = f.key != "type"
	}
	ours := []string{container, EntryName}
	t := tomlTable{headerEnd: -1, afterOurs: -1, values: map[string][2]int{}, decoded: map[string]any{}}
	var p unstable.Parser
	var cur []string
	inOurs := false
	p.Reset(old)
	for p.NextExpression() {
		expr := p.Expression()
		switch expr.Kind {
		case unstable.Table, unstable.ArrayTable:
			var end int
			cur, end = keyOf(&p, expr)
			inOurs = expr.Kind == unstable.Table && slices.Equal(cur, ours)
			if inOurs {
				t.headerEnd = lineEnd(old, end)
			}
		case unstable.KeyValue:
			key, keyEnd := keyOf(&p, expr)
			full := append(slices.Clone(cur), key...)
			switch {
			case inOurs && len(key) == 1 && owned[key[0]]:
				end := int(expr.Raw.Offset + expr.Raw.Length)
				t.values[key[0]] = [2]int{valueStart(old, keyEnd), end}
				t.afterOurs = lineEnd(old, end)
				t.decoded[key[0]] = tomlValue(expr.Value())
			case hasPrefix(cur, ours):
				// another key of our table or of a subtable: the user's
			case hasPrefix(full, ours) || (slices.Equal(full, ours[:1]) && expr.Value().Kind == unstable.InlineTable):
				return t, fmt.Errorf("%w: %s is written with dotted keys or an inline table on line %d; write it as a [%s.%s] table",
					ErrUnsupported, strings.Join(full, "."), p.Shape(expr.Raw).Start.Line, container, EntryName)
			}
		}
	}
	if err := p.Error(); err != nil {
		return t, fmt.Errorf("%w as TOML: %v", ErrSyntax, err)
	}
	return t, nil
}

// byteEdit replaces old[start:end] by text.
type byteEdit struct {
	start, end int
	text       string
}

// edits returns the byte edits that give our table e's command and args:
// differing values replaced where they stand, missing keys added after our
// last key (or the header), a missing table appended. Added lines end as
// the file's do.
func (t tomlTable) edits(old []byte, container string, e Entry) []byteEdit {
	nl := "\n"
	if bytes.Contains(old, []byte("\r\n")) {
		nl = "\r\n"
	}
	var edits []byteEdit
	var missing strings.Builder
	for _, f := range e.fields() {
		if f.key == "type" {
			continue
		}
		r, ok := t.values[f.key]
		switch {
		case !ok:
			missing.WriteString(f.key + " = " + quoteTOMLValue(f.value) + nl)
		case !equalAny(t.decoded[f.key], f.value):
			edits = append(edits, byteEdit{r[0], r[1], quoteTOMLValue(f.value)})
		}
	}
	switch {
	case t.headerEnd < 0:
		var b strings.Builder
		if len(old) > 0 {
			if !bytes.HasSuffix(old, []byte("\n")) {
				b.WriteString(nl)
			}
			b.WriteString(nl)
		}
		b.WriteString("[" + container + "." + EntryName + "]" + nl + missing.String())
		edits = append(edits, byteEdit{len(old), len(old), b.String()})
	case missing.Len() > 0:
		at := t.headerEnd
		if t.afterOurs >= 0 {
			at = t.afterOurs
		}
		text := missing.String()
		if at == len(old) && !bytes.HasSuffix(old, []byte("\n")) {
			text = nl + text
		}
		edits = append(edits, byteEdit{at, at, text})
	}
	return edits
}

func hasPrefix(path, prefix []string) bool {
	return len(path) >= len(prefix) && slices.Equal(path[:len(prefix)], prefix)
}

// keyOf returns the parts of expr's key and the offset just after its last part.
func keyOf(p *unstable.Parser, expr *unstable.Node) ([]string, int) {
	var parts []string
	end := 0
	it := expr.Key()
	for it.Next() {
		n := it.Node()
		parts = append(parts, string(n.Data))
		end = int(n.Raw.Offset + n.Raw.Length)
	}
	return parts, end
}

// lineEnd returns the offset after the end of the line that holds off.
func lineEnd(b []byte, off int) int {
	if k := bytes.IndexByte(b[off:], '\n'); k >= 0 {
		return off + k + 1
	}
	return len(b)
}

// valueStart returns the offset of a key-value's value: after the key, its
// blanks, the = and the blanks that follow.
func valueStart(b []byte, keyEnd int) int {
	n := keyEnd
	for n < len(b) && (b[n] == ' ' || b[n] == '\t') {
		n++
	}
	if n < len(b) && b[n] == '=' {
		n++
	}
	for n < len(b) && (b[n] == ' ' || b[n] == '\t') {
		n++
	}
	return n
}

// tomlValue returns a string, integer or []string value node as Go value,
// anything else as nil (which never equals an owned value).
func tomlValue(n *unstable.Node) any {
	switch n.Kind {
	case unstable.String:
		return string(n.Data)
	case unstable.Integer:
		if i, err := strconv.ParseInt(strings.ReplaceAll(string(n.Data), "_", ""), 10, 64); err == nil {
			return i
		}
		return nil
	case unstable.Array:
		var out []string
		it := n.Children()
		for it.Next() {
			c := it.Node()
			switch c.Kind {
			case unstable.String:
				out = append(out, string(c.Data))
			case unstable.Comment:
			default:
				return nil
			}
		}
		if out == nil {
			out = []string{}
		}
		return out
	}
	return nil
}

func equalAny(a, b any) bool {
	switch x := a.(type) {
	case string:
		y, ok := b.(string)
		return ok && x == y
	case int64:
		y, ok := b.(int64)
		return ok && x == y
	case []string:
		y, ok := b.([]string)
		return ok && slices.Equal(x, y)
	}
	return false
}

// quoteTOMLValue writes a string or []string as TOML basic strings.
func quoteTOMLValue(v any) string {
	switch t := v.(type) {
	case string:
		return quoteTOML(t)
	case int64:
		return strconv.FormatInt(t, 10)
	case []string:
		q := make([]string, len(t))
		for i, s := range t {
			q[i] = quoteTOML(s)
		}
		return "[" + strings.Join(q, ", ") + "]"
	}
	panic(fmt.Sprintf("hostconfig: cannot write %T as TOML", v))
}

func quoteTOML(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for _, r := range s {
		switch r {
		case '"':
			b.WriteString(`\"`)
		case '\\':
			b.WriteString(`\\`)
		case '\b':
			b.WriteString(`\b`)
		case '\t':
			b.WriteString(`\t`)
		case '\n':
			b.WriteString(`\n`)
		case '\f':
			b.WriteString(`\f`)
		case '\r':
			b.WriteString(`\r`)
		default:
			if r < 0x20 || r == 0x7f {
				fmt.Fprintf(&b, `\u%04X`, r)
			} else {
				b.WriteRune(r)
			}
		}
	}
	b.WriteByte('"')
	return b.String()
}
