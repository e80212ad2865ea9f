//go:build unix

package hostconfig

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// A run plans every file, then Write writes them in order and stops at the
// first that fails: it says how many came before it, and leaves the ones
// after it as they were.
func TestRunWritesInOrderAndStopsAtTheFirstFailure(t *testing.T) {
	t.Parallel()
	env := testEnv(t)
	var hosts []Host
	for _, name := range []string{"claude", "vscode", "cursor"} {
		h, _ := Lookup(name)
		hosts = append(hosts, h)
	}
	claude := filepath.Join(env.ProjectDir, ".mcp.json")
	writeFile(t, claude, `{"mcpServers": {}}`, 0o644)
	d, err := Decide(Request{Env: env, Names: []string{"claude", "vscode", "cursor"}, Entry: EntryOptions{Self: "/bin/bg", Absolute: true}})
	if err != nil || !slices.EqualFunc(d.Hosts, hosts, func(a, b Host) bool { return a.Name == b.Name }) {
		t.Fatalf("Decide = %v, %v", d.Hosts, err)
	}
	changes, errs := PlanChanges(env, d.Hosts, d.Entries, false)
	if len(errs) > 0 || len(changes) != 3 {
		t.Fatalf("PlanChanges = %d changes, %v", len(changes), errs)
	}
	// After the plan, .vscode becomes a file and claude's file changes.
	writeFile(t, filepath.Join(env.ProjectDir, ".vscode"), "", 0o644)
	done, err := Write(changes)
	if done != 1 || err == nil {
		t.Fatalf("Write = %d, %v; want 1 and vscode's error", done, err)
	}
	if _, err := os.Stat(filepath.Join(env.ProjectDir, ".cursor", "mcp.json")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("cursor's file after the failure: %v", err)
	}

	writeFile(t, claude, `{"mcpServers": {"other": {}}}`, 0o644)
	if done, err := Write(changes); done != 0 || !errors.Is(err, ErrChanged) {
		t.Errorf("Write over a changed file = %d, %v; want 0, ErrChanged", done, err)
	}
}

// Select takes the named hosts, or every one, or claude and the detected
// ones; a user-level host without a known home is ErrNoHome, naming it.
func TestSelect(t *testing.T) {
	t.Parallel()
	env := testEnv(t)
	if err := os.MkdirAll(filepath.Join(env.ProjectDir, ".cursor"), 0o755); err != nil {
		t.Fatal(err)
	}
	names := func(hosts []Host) []string {
		var out []string
		for _, h := range hosts {
			out = append(out, h.Name)
		}
		return out
	}
	for _, c := range []struct {
		names []string
		all   bool
		want  []string
	}{
		{nil, false, []string{"claude", "cursor"}},
		{[]string{"codex", "claude"}, false, []string{"claude", "codex"}},
		{nil, true, Names()},
	} {
		if got, err := Select(env, c.names, c.all); err != nil || !slices.Equal(names(got), c.want) {
			t.Errorf("Select(%v, %v) = %v, %v; want %v", c.names, c.all, names(got), err, c.want)
		}
	}
	env.Home = ""
	_, err := Select(env, []string{"claude", "windsurf"}, false)
	if !errors.Is(err, ErrNoHome) || err.Error() != "the home directory is not known, so Windsurf's file cannot be found; set HOME (for Codex, or CODEX_HOME)" {
		t.Errorf("Select without a home = %v", err)
	}
}
