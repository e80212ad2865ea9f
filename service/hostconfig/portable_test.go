//go:build unix

package hostconfig

import (
	"slices"
	"strings"
	"testing"
	"time"
)

// A project-level host's portable entry names buildguard from PATH and no
// path of this machine, and read back as its host starts it, it serves the
// project it lies in: Claude Code and Gemini CLI start it in the project,
// VS Code and Cursor expand ${workspaceFolder} to it (docs/hosts.md#1).
func TestPortableEntryServesTheProjectItLiesIn(t *testing.T) {
	t.Parallel()
	for _, h := range All() {
		if h.Scope != Project {
			continue
		}
		t.Run(h.Name, func(t *testing.T) {
			t.Parallel()
			env := testEnv(t)
			c, err := Plan(h, env, PortableEntry(h))
			if err != nil {
				t.Fatal(err)
			}
			if strings.Contains(string(c.New), env.ProjectDir) || !strings.Contains(string(c.New), `"command": "buildguard"`) {
				t.Errorf("portable entry names this machine's paths:\n%s", c.New)
			}
			if err := c.Write(); err != nil {
				t.Fatal(err)
			}
			got, err := ReadConfigured(h, env, func(string) (string, bool) { return "", false })
			if err != nil {
				t.Fatal(err)
			}
			served := got.Dir
			if i := slices.Index(got.Args, "--project-dir"); i >= 0 {
				served = got.Args[i+1]
			}
			if got.Command != "buildguard" || got.Args[0] != "mcp" || served != env.ProjectDir || got.Dir != env.ProjectDir {
				t.Errorf("the host starts %+v, want buildguard mcp serving %s", got, env.ProjectDir)
			}
		})
	}
}

// An entry with this machine's paths, as an older init wrote it, becomes
// the portable one; the user's keys and comments stay (docs/decisions.md#D13).
func TestPortableEntryReplacesAbsolutePaths(t *testing.T) {
	t.Parallel()
	h, _ := Lookup("cursor")
	old := "{\n  // team servers\n  \"mcpServers\": {\n    \"buildguard\": {\"command\": \"/home/a/bin/buildguard\", \"args\": [\"mcp\", \"--project-dir\", \"/home/a/shop\"], \"env\": {\"X\": \"1\"}}, // ours\n  },\n}\n"
	want := "{\n  // team servers\n  \"mcpServers\": {\n    \"buildguard\": {\"command\": \"buildguard\", \"args\": [\"mcp\", \"--project-dir\", \"${workspaceFolder}\"], \"env\": {\"X\": \"1\"}}, // ours\n  },\n}\n"
	out, _, err := edit(h, []byte(old), PortableEntry(h))
	if err != nil || string(out) != want {
		t.Errorf("edit = %v\n%s\nwant\n%s", err, out, want)
	}
}

// Where a host has a tool timeout, the entry gets one at least as long as
// asked, in the host's unit: added when missing, a shorter one replaced
// where it stands (with a note), a longer one the user set kept as written.
func TestToolTimeoutAtLeastTheBuildCall(t *testing.T) {
	t.Parallel()
	codex, _ := Lookup("codex")
	gemini, _ := Lookup("gemini")
	d := 1920*time.Second + 300*time.Millisecond // rounded up: 1921 s
	cases := []struct {
		name     string
		h        Host
		old      string
		want     string
		wantNote bool
	}{
		{"codex added", codex,
			"[mcp_servers.buildguard]\ncommand = \"/bg\"\nargs = [\"mcp\"]\nenv = { A = \"1\" }\n",
			"[mcp_servers.buildguard]\ncommand = \"/bg\"\nargs = [\"mcp\"]\ntool_timeout_sec = 1921\nenv = { A = \"1\" }\n", false},
		{"codex shorter", codex,
			"[mcp_servers.buildguard]\ntool_timeout_sec = 60 # mine\ncommand = \"/bg\"\nargs = [\"mcp\"]\n",
			"[mcp_servers.buildguard]\ntool_timeout_sec = 1921 # mine\ncommand = \"/bg\"\nargs = [\"mcp\"]\n", true},
		{"codex longer", codex,
			"[mcp_servers.buildguard]\ncommand = \"/bg\"\nargs = [\"mcp\"]\ntool_timeout_sec = 86_400\n",
			"[mcp_servers.buildguard]\ncommand = \"/bg\"\nargs = [\"mcp\"]\ntool_timeout_sec = 86_400\n", false},
		{"gemini added", gemini,
			`{"mcpServers": {"buildguard": {"command": "/bg", "args": ["mcp"]}}}`,
			`{"mcpServers": {"buildguard": {"command": "/bg", "args": ["mcp"], "timeout": 1920300}}}`, false},
		{"gemini shorter", gemini,
			`{"mcpServers": {"buildguard": {"timeout": 600000, "command": "/bg", "args": ["mcp"]}}}`,
			`{"mcpServers": {"buildguard": {"timeout": 1920300, "command": "/bg", "args": ["mcp"]}}}`, true},
		{"gemini longer", gemini,
			`{"mcpServers": {"buildguard": {"command": "/bg", "args": ["mcp"], "timeout": 3.6e6}}}`,
			`{"mcpServers": {"buildguard": {"command": "/bg", "args": ["mcp"], "timeout": 3.6e6}}}`, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			e := Entry{Command: "/bg", Args: []string{"mcp"}}.WithToolTimeout(c.h, d)
			out, notes, err := edit(c.h, []byte(c.old), e)
			if err != nil || string(out) != c.want || (len(notes) > 0) != c.wantNote {
				t.Errorf("edit = %v, notes %q\n%s\nwant\n%s", err, notes, out, c.want)
			}
		})
	}
	claude, _ := Lookup("claude")
	if e := PortableEntry(claude).WithToolTimeout(claude, d); e.TimeoutKey != "" {
		t.Errorf("Claude Code has no tool timeout setting, entry = %+v", e)
	}
}
