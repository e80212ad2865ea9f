//go:build unix

package hostconfig

import (
	"slices"
	"strings"
	"testing"
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
