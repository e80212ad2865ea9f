package hostconfig

import (
	"strings"
	"testing"
)

// TestDroppedAnswerWithinNote: a run without --answer-within drops the
// entry's; the note offers the init run that keeps a value mcp accepts,
// and for a value mcp refuses (or none) says the server could not start
// and offers no run that init would refuse too.
func TestDroppedAnswerWithinNote(t *testing.T) {
	t.Parallel()
	var claude Host
	for _, h := range All() {
		if h.Name == "claude" {
			claude = h
		}
	}
	e := PortableEntry(claude)
	for _, c := range []struct {
		args string
		want string // the note's text after "the entry's --answer-within "; "" for no note
	}{
		{`"mcp"`, ""},
		{`"mcp", "--answer-within", "50s"`, `50s is dropped, so a long build's call waits for the whole build; run init with --answer-within 50s to keep it`},
		{`"mcp", "--answer-within=1m40s"`, `1m40s is dropped, so a long build's call waits for the whole build; run init with --answer-within 1m40s to keep it`},
		{`"mcp", "--answer-within", "soon"`, `"soon" is dropped: buildguard mcp refuses it`},
		{`"mcp", "--answer-within", "11m"`, `"11m" is dropped: buildguard mcp refuses it`},
		{`"mcp", "--answer-within", "--project-dir", "x"`, `"--project-dir" is dropped: buildguard mcp refuses it`},
		{`"mcp", "--answer-within"`, `"" is dropped: buildguard mcp refuses it`},
		{`"mcp", "--answer-within="`, `"" is dropped: buildguard mcp refuses it`},
	} {
		in := `{"mcpServers": {"buildguard": {"command": "buildguard", "args": [` + c.args + `]}}}`
		_, notes, err := edit(claude, []byte(in), e)
		if err != nil {
			t.Fatalf("args [%s]: %v", c.args, err)
		}
		got := ""
		for _, n := range notes {
			if s, ok := strings.CutPrefix(n, "the entry's --answer-within "); ok {
				got = s
			}
		}
		if c.want == "" && got != "" || !strings.HasPrefix(got, c.want) {
			t.Errorf("args [%s]: note %q, want one starting %q", c.args, got, c.want)
		}
		if strings.Contains(c.want, "refuses") && strings.Contains(got, "run init with") {
			t.Errorf("args [%s]: note %q offers an init run that init refuses", c.args, got)
		}
	}
}
