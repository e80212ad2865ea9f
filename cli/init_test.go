package cli

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// runInitIn runs init --mcp --absolute in dir: the test binary is not on
// PATH, so the portable entry would be refused.
func runInitIn(t *testing.T, dir string) (ExitCode, string) {
	t.Helper()
	var stderr bytes.Buffer
	code := run([]string{"init", "--mcp", "--absolute", "--project-dir", dir}, &bytes.Buffer{}, &stderr)
	return code, stderr.String()
}

func TestInitMCPCreatesAndIsIdempotent(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	if code, msg := runInitIn(t, dir); code != ExitOK {
		t.Fatalf("init = %d: %s", code, msg)
	}
	path := filepath.Join(dir, ".mcp.json")
	first, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		MCPServers map[string]struct {
			Command string   `json:"command"`
			Args    []string `json:"args"`
		} `json:"mcpServers"`
	}
	if err := json.Unmarshal(first, &doc); err != nil {
		t.Fatal(err)
	}
	e := doc.MCPServers["buildguard"]
	if !filepath.IsAbs(e.Command) || !cmp.Equal(e.Args, []string{"mcp", "--project-dir", dir}) {
		t.Errorf("entry = %+v", e)
	}
	fi1, _ := os.Stat(path)
	code, msg := runInitIn(t, dir)
	second, _ := os.ReadFile(path)
	fi2, _ := os.Stat(path)
	if code != ExitOK || !bytes.Equal(first, second) || !fi1.ModTime().Equal(fi2.ModTime()) || !strings.Contains(msg, "left unchanged") {
		t.Errorf("second run changed the file or failed: %d %q", code, msg)
	}
}

func TestInitMCPKeepsOtherEntries(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	path := filepath.Join(dir, ".mcp.json")
	old := `{"z":1,"mcpServers":{"other":{"command":"x","args":[]},"buildguard":{"command":"/old"}},"a":[true]}`
	if err := os.WriteFile(path, []byte(old), 0o600); err != nil {
		t.Fatal(err)
	}
	if code, msg := runInitIn(t, dir); code != ExitOK {
		t.Fatalf("init = %d: %s", code, msg)
	}
	data, _ := os.ReadFile(path)
	var got map[string]any
	if err := json.Unmarshal(data, &got); err != nil {
		t.Fatal(err)
	}
	servers := got["mcpServers"].(map[string]any)
	if got["z"] != 1.0 || !cmp.Equal(got["a"], []any{true}) || servers["other"] == nil || servers["buildguard"].(map[string]any)["command"] == "/old" {
		t.Errorf("merged file = %s", data)
	}
	if strings.Index(string(data), `"z"`) > strings.Index(string(data), `"a"`) {
		t.Errorf("key order not kept: %s", data)
	}
	if fi, _ := os.Stat(path); fi.Mode().Perm() != 0o600 {
		t.Errorf("mode = %v, want the existing 0600", fi.Mode().Perm())
	}
}

func TestInitMCPLeavesInvalidFilesUntouched(t *testing.T) {
	t.Parallel()
	for name, content := range map[string]string{
		"array": `[1,2]`, "string": `"x"`, "broken": `{"mcpServers":`, "servers not object": `{"mcpServers":[]}`,
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			path := filepath.Join(dir, ".mcp.json")
			os.WriteFile(path, []byte(content), 0o644)
			code, msg := runInitIn(t, dir)
			data, _ := os.ReadFile(path)
			if code != ExitUsage || string(data) != content || !strings.Contains(msg, "left unchanged") {
				t.Errorf("init = %d %q, file now %q", code, msg, data)
			}
			entries, _ := os.ReadDir(dir)
			if len(entries) != 1 {
				t.Errorf("stray files left: %v", entries)
			}
		})
	}
}

func TestInitUsage(t *testing.T) {
	t.Parallel()
	for _, args := range [][]string{{"init", "--host", "nope"}, {"init", "--all", "--host", "claude"}, {"init", "--check", "--skill"}, {"init", "--check", "--absolute"}, {"init", "--absolute", "--absolute"}, {"init", "--mcp", "--mcp"}, {"init", "--mcp", "--bogus"}, {"init", "--mcp", "--project-dir", "/nonexistent/x"}} {
		if code := run(args, &bytes.Buffer{}, &bytes.Buffer{}); code != ExitUsage {
			t.Errorf("%q = %d, want 2", args, code)
		}
	}
	var stderr, stdout bytes.Buffer
	if code := run([]string{"init", "--help"}, &stdout, &stderr); code != ExitOK || stdout.Len() != 0 || !strings.HasPrefix(stderr.String(), "Usage:") {
		t.Errorf("init --help = %d %q %q", code, stdout.String(), stderr.String())
	}
}

// A .mcp.json that is a symlink (a config shared between checkouts) is
// updated where it points; the link stays a link. A dangling link is left
// alone.
func TestInitMCPWritesThroughSymlink(t *testing.T) {
	t.Parallel()
	dir, shared := t.TempDir(), t.TempDir()
	target := filepath.Join(shared, "mcp.json")
	if err := os.WriteFile(target, []byte(`{"keep":1}`), 0o640); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, ".mcp.json")
	if err := os.Symlink(target, link); err != nil {
		t.Fatal(err)
	}
	if code, msg := runInitIn(t, dir); code != ExitOK {
		t.Fatalf("init = %d: %s", code, msg)
	}
	if fi, err := os.Lstat(link); err != nil || fi.Mode()&os.ModeSymlink == 0 {
		t.Fatalf(".mcp.json is no longer a symlink: %v %v", fi.Mode(), err)
	}
	var got map[string]any
	data, _ := os.ReadFile(target)
	if err := json.Unmarshal(data, &got); err != nil || got["keep"] != 1.0 || got["mcpServers"].(map[string]any)["buildguard"] == nil {
		t.Fatalf("link target = %s (%v)", data, err)
	}
	if fi, _ := os.Stat(target); fi.Mode().Perm() != 0o640 {
		t.Errorf("target mode = %v, want the existing 0640", fi.Mode().Perm())
	}
	if entries, _ := os.ReadDir(shared); len(entries) != 1 {
		t.Errorf("stray files beside the target: %v", entries)
	}

	dangling := t.TempDir()
	link = filepath.Join(dangling, ".mcp.json")
	os.Symlink(filepath.Join(dangling, "missing", "mcp.json"), link)
	code, msg := runInitIn(t, dangling)
	if fi, err := os.Lstat(link); code != ExitUsage || err != nil || fi.Mode()&os.ModeSymlink == 0 || !strings.Contains(msg, "left unchanged") {
		t.Errorf("dangling link: init = %d %q; link now %v %v", code, msg, fi, err)
	}
}

// When a write still fails after every file was planned (the disk, or a
// file changed under init), init says which files were written and which
// were not, and exits 1. Here vscode's file is a link to a file whose name
// leaves no room for the temporary file written beside it, which the plan
// does not foresee.
func TestInitSaysWhatWasAndWasNotWritten(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	long := filepath.Join(dir, strings.Repeat("x", 240)+".json")
	if err := os.WriteFile(long, []byte("{}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(filepath.Join(dir, ".vscode"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(long, filepath.Join(dir, ".vscode", "mcp.json")); err != nil {
		t.Skipf("no symlinks here: %v", err)
	}
	var stderr bytes.Buffer
	code := run([]string{"init", "--host", "claude", "--host", "vscode", "--host", "cursor", "--absolute", "--project-dir", dir}, &bytes.Buffer{}, &stderr)
	claude, vscode, cursor := filepath.Join(dir, ".mcp.json"), filepath.Join(dir, ".vscode", "mcp.json"), filepath.Join(dir, ".cursor", "mcp.json")
	want := "buildguard init: written: " + claude + "; not written: " + vscode + ", " + cursor + "\n"
	if code != ExitFailure || !strings.HasSuffix(stderr.String(), want) {
		t.Errorf("init = %d:\n%s\nwant it to end with %q", code, stderr.String(), want)
	}
	if _, err := os.Stat(cursor); err == nil {
		t.Errorf("%s was written after the failure", cursor)
	}
}

// The entry names the path buildguard was invoked by when that leads to
// this binary (a symlink an upgrade repoints), else the real path.
func TestEntryCommandKeepsTheInvokedPath(t *testing.T) {
	t.Parallel()
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	self, _ = filepath.EvalSymlinks(self)
	dir := t.TempDir()
	link := filepath.Join(dir, "buildguard")
	if err := os.Symlink(self, link); err != nil {
		t.Fatal(err)
	}
	other := filepath.Join(dir, "other")
	os.WriteFile(other, []byte("#!/bin/sh\n"), 0o755)
	for arg0, want := range map[string]string{link: link, other: self, "no-such-buildguard-here": self, self: self} {
		if got, err := entryCommand(arg0); err != nil || got != want {
			t.Errorf("entryCommand(%s) = %s, %v; want %s", arg0, got, err, want)
		}
	}
}

// The tool timeout init writes outlasts the project's longest build call:
// its wait in the queue plus its timeout, plus the margin; the defaults
// without a configuration, and with one that cannot be used (saying so).
func TestBuildCallTimeout(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name, config string
		want         time.Duration
		why          bool
	}{
		{"none", "", 1260 * time.Second, false},
		{"configured", `{"builds": {"a": {"command": ["true"], "timeoutSeconds": 1800, "queueTimeoutSeconds": 60}, "b": {"command": ["true"], "timeoutSeconds": 900}}, "defaultBuild": "a"}`, 1920 * time.Second, false},
		{"broken", `{"builds": `, 1260 * time.Second, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			if c.config != "" {
				if err := os.WriteFile(filepath.Join(dir, ".buildguard.json"), []byte(c.config), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			got, why := buildCallTimeout(dir)
			if got != c.want || (why != "") != c.why {
				t.Errorf("buildCallTimeout = %v, %q; want %v", got, why, c.want)
			}
		})
	}
}
