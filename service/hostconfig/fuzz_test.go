package hostconfig

import (
	"bytes"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/pelletier/go-toml/v2/unstable"
	"github.com/tailscale/hujson"
)

// refusal reports whether err is one of the refusals of docs/decisions.md#D13.
func refusal(err error) bool {
	for _, r := range []error{ErrInvalidUTF8, ErrSyntax, ErrDuplicateKey, ErrNotObject, ErrUnsupported, ErrWillNotStart} {
		if errors.Is(err, r) {
			return true
		}
	}
	return false
}

// fuzzEdit is the property of every config edit: it is refused, or its
// result parses, holds our entry, keeps every other server of the servers
// table as it was, and a second edit changes no byte. edit itself checks
// that nothing else changed; a failure of that check is a bug.
func fuzzEdit(t *testing.T, h Host, data []byte) []byte {
	e := NewEntry(h, "/opt/bg/buildguard", "/home/dev/shop \"quoted\" & <tagged>")
	out, _, err := edit(h, data, e)
	if err != nil {
		if !refusal(err) || errors.Is(err, errEditBroken) {
			t.Fatalf("%s: %v\ninput:\n%q", h.Name, err, data)
		}
		return nil
	}
	before, _ := decode(h.Format, data)
	after, err := decode(h.Format, out)
	if err != nil {
		t.Fatalf("%s: the result does not parse: %v\n%s", h.Name, err, out)
	}
	got, err := ReadConfiguredData(h, out)
	if err != nil || got.Command != e.Command || !equalAny(got.Args, e.Args) {
		t.Fatalf("%s: entry read back = %+v, %v\n%s", h.Name, got, err, out)
	}
	oldServers, _ := before[h.Container].(map[string]any)
	newServers, _ := after[h.Container].(map[string]any)
	for name, v := range oldServers {
		if name != EntryName && !equalData(v, newServers[name]) {
			t.Fatalf("%s: server %q changed\ninput:\n%s\noutput:\n%s", h.Name, name, data, out)
		}
	}
	if again, _, err := edit(h, out, e); err != nil || !bytes.Equal(again, out) {
		t.Fatalf("%s: a second edit changed the file (%v):\n%s\n----\n%s", h.Name, err, out, again)
	}
	return out
}

func FuzzEditJSON(f *testing.F) {
	for _, s := range []string{
		"", "{}", `{"a":1}`, `[]`, `{"mcpServers":{"x":{}}}`, `{"servers":{"buildguard":{"command":"/x","env":{"A":"1"}}}}`,
		"{\n  // c\n  \"servers\": {\n    \"o\": {}, // t\n  },\n}\n", "{\"mcpServers\": {} /* none */}", "{\"a\":1 // x\n}",
		"{\"mcpServers\":{\"buildguard\":{\"args\":[\n  \"mcp\"\n]}}}", "\t{\n\t\"mcpServers\":\n\t{\n\t}\n}",
	} {
		f.Add([]byte(s))
	}
	hosts := []Host{}
	for _, h := range All() {
		if h.Format == JSON && (h.Name == "claude" || h.Name == "vscode") {
			hosts = append(hosts, h)
		}
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		for _, h := range hosts {
			out := fuzzEdit(t, h, data)
			if out == nil {
				continue
			}
			// No comment is lost; when our entry was not there, none is
			// inside a value the edit replaces, so all of them stay, in order.
			in, got := jsonComments(data), jsonComments(out)
			if !subsequence(got, in) || (!bytes.Contains(data, []byte(EntryName)) && !slices.Equal(got, in)) {
				t.Fatalf("%s: comments changed: %q became %q\n%s", h.Name, in, got, out)
			}
			// Standard JSON stays standard JSON.
			if v, err := hujson.Parse(data); err == nil && v.IsStandard() {
				if w, err := hujson.Parse(out); err != nil || !w.IsStandard() {
					t.Fatalf("%s: standard JSON became JSONC:\n%s\n----\n%s", h.Name, data, out)
				}
			}
		}
	})
}

// jsonComments lists the comments of a JSONC document in order.
func jsonComments(b []byte) []string {
	var out []string
	for i := 0; i < len(b); i++ {
		switch {
		case b[i] == '"':
			for i++; i < len(b) && b[i] != '"'; i++ {
				if b[i] == '\\' {
					i++
				}
			}
		case bytes.HasPrefix(b[i:], []byte("//")):
			k := bytes.IndexByte(b[i:], '\n')
			if k < 0 {
				k = len(b) - i
			}
			out = append(out, string(b[i:i+k]))
			i += k
		case bytes.HasPrefix(b[i:], []byte("/*")):
			k := bytes.Index(b[i+2:], []byte("*/"))
			if k < 0 {
				return out
			}
			out = append(out, string(b[i:i+2+k+2]))
			i += 2 + k + 1
		}
	}
	return out
}

// subsequence reports whether every element of sub appears in seq in order.
func subsequence(sub, seq []string) bool {
	j := 0
	for _, s := range seq {
		if j < len(sub) && sub[j] == s {
			j++
		}
	}
	return j == len(sub)
}

func FuzzEditTOML(f *testing.F) {
	for _, s := range []string{
		"", "a = 1", "[mcp_servers.other]\ncommand = \"x\"\n", "[mcp_servers.buildguard]\ncommand = \"/x\" # c\nenv = { A = \"1\" }\n",
		"# c\n[mcp_servers.buildguard]\n\n[mcp_servers.buildguard.env]\nA = \"b\"\n", "mcp_servers.other.command = \"x\"\n",
		"[mcp_servers]\nbuildguard = {}\n", "x = \"\"\"\n[mcp_servers.buildguard]\n\"\"\"\n", "[[mcp_servers]]\n", "mcp_servers = 1\n",
		"[mcp_servers.buildguard]\nargs = [\n  \"mcp\", # one\n]\ncommand = 'lit'", "a = 1\r\n[b]\r\n",
	} {
		f.Add([]byte(s))
	}
	h, _ := Lookup("codex")
	f.Fuzz(func(t *testing.T, data []byte) {
		out := fuzzEdit(t, h, data)
		if out == nil {
			return
		}
		in, got := tomlComments(t, data), tomlComments(t, out)
		if !subsequence(got, in) || (!bytes.Contains(data, []byte(EntryName)) && !slices.Equal(got, in)) {
			t.Fatalf("comments changed: %q became %q\n%s", in, got, out)
		}
	})
}

// tomlComments lists the comments of a TOML document in order, as go-toml's
// parser finds them.
func tomlComments(t *testing.T, b []byte) []string {
	var out []string
	p := unstable.Parser{KeepComments: true}
	p.Reset(b)
	var walk func(n *unstable.Node)
	walk = func(n *unstable.Node) {
		for ; n != nil && n.Valid(); n = n.Next() {
			if n.Kind == unstable.Comment {
				out = append(out, string(n.Data))
			}
			if n.Kind != unstable.Key {
				walk(n.Child())
			}
		}
	}
	for p.NextExpression() {
		walk(p.Expression())
	}
	if err := p.Error(); err != nil {
		t.Fatalf("parsing for comments: %v", err)
	}
	return out
}

func FuzzEditSkill(f *testing.F) {
	for _, s := range []string{"", "# Notes\n", SkillBlock, "a\n" + SkillBegin + "\nold\n" + SkillEnd + "\nb\n", SkillEnd + SkillBegin, "x" + SkillBegin} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		out, _, err := editSkill(data)
		if err != nil {
			if !refusal(err) {
				t.Fatal(err)
			}
			return
		}
		if block := strings.ReplaceAll(SkillBlock, "\n", lineEnding(data)); bytes.Count(out, []byte(block)) != 1 {
			t.Fatalf("the block is not there once:\n%s", out)
		}
		if i := bytes.Index(data, []byte(SkillBegin)); i >= 0 && !bytes.HasPrefix(out, data[:i]) {
			t.Fatalf("the text before the block changed")
		}
		if !bytes.Contains(data, []byte(SkillBegin)) && !bytes.HasPrefix(out, data) {
			t.Fatalf("the file's text changed")
		}
		if again, _, err := editSkill(out); err != nil || !bytes.Equal(again, out) {
			t.Fatalf("a second edit changed the file (%v)", err)
		}
	})
}
