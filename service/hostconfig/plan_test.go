//go:build unix

package hostconfig

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

func testEnv(t *testing.T) Env {
	t.Helper()
	root := t.TempDir()
	env := Env{ProjectDir: filepath.Join(root, "project"), Home: filepath.Join(root, "home")}
	if err := os.MkdirAll(env.ProjectDir, 0o755); err != nil {
		t.Fatal(err)
	}
	return env
}

// eachHost runs test for every host, in parallel.
func eachHost(t *testing.T, test func(t *testing.T, h Host)) {
	for _, h := range All() {
		t.Run(h.Name, func(t *testing.T) {
			t.Parallel()
			test(t, h)
		})
	}
}

func writeFile(t *testing.T, path, data string, mode os.FileMode) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(data), mode); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(path, mode); err != nil {
		t.Fatal(err)
	}
}

// Every host's file is planned, written with its mode kept, and a second
// plan of the written file changes nothing.
func TestPlanWriteEveryHost(t *testing.T) {
	t.Parallel()
	eachHost(t, func(t *testing.T, h Host) {
		env := testEnv(t)
		e := NewEntry(h, "/bin/bg", env.ProjectDir)
		c, err := Plan(h, env, e)
		if err != nil || c.Exists || !c.Changed() {
			t.Fatalf("Plan of a missing file = %+v, %v", c, err)
		}
		if err := c.Write(); err != nil {
			t.Fatal(err)
		}
		fi, err := os.Stat(h.File(env))
		if err != nil {
			t.Fatal(err)
		}
		if want := map[Scope]os.FileMode{Project: 0o644, User: 0o600}[h.Scope]; fi.Mode().Perm() != want {
			t.Errorf("new file mode %v, want %v", fi.Mode().Perm(), want)
		}
		again, err := Plan(h, env, e)
		if err != nil || again.Changed() {
			t.Errorf("second plan = changed %v, %v", again.Changed(), err)
		}
		got, err := ReadConfigured(h, env, os.LookupEnv)
		if err != nil || got.Command != "/bin/bg" || strings.Join(got.Args, " ") != "mcp --project-dir "+env.ProjectDir || got.Dir != h.WorkDir(env) {
			t.Errorf("ReadConfigured = %+v, %v", got, err)
		}
	})
}

// A read-only file that would change is refused and stays as it was; one
// that already holds the entry is fine.
func TestPlanRefusesReadOnly(t *testing.T) {
	t.Parallel()
	eachHost(t, testPlanRefusesReadOnly)
}

func testPlanRefusesReadOnly(t *testing.T, h Host) {
	env := testEnv(t)
	path := h.File(env)
	keep := `{"keep": 1}`
	if h.Format == TOML {
		keep = "keep = 1\n"
	}
	writeFile(t, path, keep, 0o444)
	_, err := Plan(h, env, NewEntry(h, "/bin/bg", env.ProjectDir))
	var r *Refusal
	if !errors.As(err, &r) || !errors.Is(err, ErrReadOnly) || !strings.Contains(err.Error(), "chmod u+w "+path) {
		t.Fatalf("Plan of a read-only file = %v, want a read-only refusal that says chmod", err)
	}
	if b, _ := os.ReadFile(path); string(b) != keep {
		t.Errorf("file now %q", b)
	}

	os.Chmod(path, 0o644)
	c, err := Plan(h, env, NewEntry(h, "/bin/bg", env.ProjectDir))
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Write(); err != nil {
		t.Fatal(err)
	}
	os.Chmod(path, 0o444)
	if c, err := Plan(h, env, NewEntry(h, "/bin/bg", env.ProjectDir)); err != nil || c.Changed() {
		t.Errorf("read-only file that already has the entry: changed=%v, %v", c.Changed(), err)
	}
}

// A symlinked config is written where it points, with the target's mode;
// the link stays a link and nothing is left beside the target.
func TestPlanWritesThroughSymlink(t *testing.T) {
	t.Parallel()
	eachHost(t, testPlanWritesThroughSymlink)
}

func testPlanWritesThroughSymlink(t *testing.T, h Host) {
	env := testEnv(t)
	shared := t.TempDir()
	target := filepath.Join(shared, "config")
	mine, theme := "{\n  // mine\n  \"theme\": \"dark\"\n}\n", `"theme": "dark"`
	if h.Format == TOML {
		mine, theme = "# mine\ntheme = \"dark\"\n", `theme = "dark"`
	}
	writeFile(t, target, mine, 0o640)
	link := h.File(env)
	os.MkdirAll(filepath.Dir(link), 0o755)
	if err := os.Symlink(target, link); err != nil {
		t.Fatal(err)
	}
	c, err := Plan(h, env, NewEntry(h, "/bin/bg", env.ProjectDir))
	if err != nil || c.Target != target {
		t.Fatalf("Plan = target %q, %v", c.Target, err)
	}
	if err := c.Write(); err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Lstat(link); err != nil || fi.Mode()&os.ModeSymlink == 0 {
		t.Fatalf("the link is gone: %v", err)
	}
	b, _ := os.ReadFile(target)
	if !bytes.Contains(b, []byte("mine")) || !bytes.Contains(b, []byte(theme)) || !bytes.Contains(b, []byte(`buildguard`)) {
		t.Errorf("target now:\n%s", b)
	}
	if fi, _ := os.Stat(target); fi.Mode().Perm() != 0o640 {
		t.Errorf("target mode %v, want 0640", fi.Mode().Perm())
	}
	if entries, _ := os.ReadDir(shared); len(entries) != 1 {
		t.Errorf("files beside the target: %v", entries)
	}

	os.Remove(link)
	os.Symlink(filepath.Join(shared, "missing"), link)
	if _, err := Plan(h, env, NewEntry(h, "/bin/bg", env.ProjectDir)); !errors.As(err, new(*Refusal)) || !strings.Contains(err.Error(), "does not resolve") {
		t.Errorf("dangling link: %v", err)
	}
}

// A FIFO, a directory, a file over 1 MiB, invalid UTF-8 and a duplicate
// key are refused unchanged for every host, and planning never blocks.
func TestPlanRefusesInputs(t *testing.T) {
	t.Parallel()
	eachHost(t, testPlanRefusesInputs)
}

func testPlanRefusesInputs(t *testing.T, h Host) {
	dup, badUTF8 := `{"x": 1, "x": 2}`, "{\"a\": \"\xff\"}"
	if h.Format == TOML {
		dup, badUTF8 = "x = 1\nx = 2\n", "a = \"\xff\"\n"
	}
	for name, c := range map[string]struct {
		make func(t *testing.T, path string)
		want error
		says string
	}{
		"fifo": {func(t *testing.T, path string) {
			os.MkdirAll(filepath.Dir(path), 0o755)
			if err := syscall.Mkfifo(path, 0o644); err != nil {
				t.Fatal(err)
			}
		}, nil, "is a named pipe (FIFO), not a regular file"},
		"directory": {func(t *testing.T, path string) { os.MkdirAll(path, 0o755) }, nil, "is a directory"},
		"too large": {func(t *testing.T, path string) {
			writeFile(t, path, "{}", 0o644)
			os.Truncate(path, 1<<20+1)
		}, nil, "larger than the limit of 1 MiB"},
		"invalid utf-8": {func(t *testing.T, path string) { writeFile(t, path, badUTF8, 0o644) }, ErrInvalidUTF8, "Save it as UTF-8"},
		"duplicate":     {func(t *testing.T, path string) { writeFile(t, path, dup, 0o644) }, ErrDuplicateKey, "Remove the duplicate"},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			env := testEnv(t)
			path := h.File(env)
			c.make(t, path)
			before, _ := os.Lstat(path)
			done := make(chan error, 1)
			go func() {
				_, err := Plan(h, env, NewEntry(h, "/bin/bg", env.ProjectDir))
				done <- err
			}()
			var err error
			select {
			case err = <-done:
			case <-time.After(10 * time.Second):
				t.Fatal("Plan blocked for 10 s")
			}
			var r *Refusal
			if !errors.As(err, &r) || (c.want != nil && !errors.Is(err, c.want)) || !strings.Contains(err.Error(), c.says) || !strings.Contains(err.Error(), "left unchanged") {
				t.Fatalf("Plan = %v, want a refusal saying %q", err, c.says)
			}
			after, _ := os.Lstat(path)
			if before.Mode() != after.Mode() || before.Size() != after.Size() || !before.ModTime().Equal(after.ModTime()) {
				t.Errorf("the file changed")
			}
		})
	}
}

// A config owned by another user keeps its owner and group when root
// rewrites it (init run with sudo).
func TestWriteKeepsOwner(t *testing.T) {
	t.Parallel()
	if os.Geteuid() != 0 {
		t.Skip("only root can give a file another owner")
	}
	env := testEnv(t)
	h, _ := Lookup("claude")
	path := h.File(env)
	writeFile(t, path, "{}", 0o644)
	if err := os.Chown(path, 12345, 23456); err != nil {
		t.Fatal(err)
	}
	c, err := Plan(h, env, NewEntry(h, "/bin/bg", env.ProjectDir))
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Write(); err != nil {
		t.Fatal(err)
	}
	fi, _ := os.Stat(path)
	if st := fi.Sys().(*syscall.Stat_t); st.Uid != 12345 || st.Gid != 23456 {
		t.Errorf("owner %d:%d, want 12345:23456", st.Uid, st.Gid)
	}
}

// --check starts what the host would: VS Code's ${workspaceFolder} is the
// project, the entry's env is added, and its cwd wins over the host's.
func TestReadConfiguredAsTheHostStartsIt(t *testing.T) {
	t.Parallel()
	env := testEnv(t)
	h, _ := Lookup("vscode")
	writeFile(t, h.File(env), `{"servers": {"buildguard": {"type": "stdio", "command": "${workspaceFolder}/bin/bg",
		"args": ["mcp", "--project-dir", "${workspaceFolder}"], "env": {"B": "2", "A": "1"}, "cwd": "${workspaceFolder}/sub"}}}`, 0o644)
	got, err := ReadConfigured(h, env, os.LookupEnv)
	want := Configured{Command: env.ProjectDir + "/bin/bg", Args: []string{"mcp", "--project-dir", env.ProjectDir}, Env: []string{"A=1", "B=2"}, Dir: env.ProjectDir + "/sub"}
	if err != nil || !equalData(normalize(got.Args), normalize(want.Args)) || got.Command != want.Command || strings.Join(got.Env, ",") != "A=1,B=2" || got.Dir != want.Dir {
		t.Errorf("ReadConfigured = %+v, %v; want %+v", got, err, want)
	}
	c, _ := Lookup("codex")
	writeFile(t, c.File(env), "[mcp_servers.buildguard]\ncommand = \"bg\"\n", 0o600)
	if got, err := ReadConfigured(c, env, os.LookupEnv); err != nil || got.Dir != filepath.Join(env.Home, ".codex") || got.Args != nil {
		t.Errorf("codex: %+v, %v; want its working directory in ~/.codex", got, err)
	}
	if got, err := ReadConfiguredData(c, []byte("mcp_servers.buildguard = {command = \"bg\"}\n")); err != nil || got.Command != "bg" {
		t.Errorf("codex inline table: %+v, %v; init cannot edit it, but Codex reads it", got, err)
	}
}

// A relative cwd is resolved as the host resolves it: below the directory
// the host starts servers in (the project for a project file, the host's
// own folder for a user file), never below the directory init runs in.
func TestReadConfiguredResolvesARelativeCwd(t *testing.T) {
	t.Parallel()
	env := testEnv(t)
	for _, c := range []struct {
		host, file, want string
	}{
		{"claude", `{"mcpServers": {"buildguard": {"command": "bg", "cwd": "sub/dir"}}}`, filepath.Join(env.ProjectDir, "sub/dir")},
		{"gemini", `{"mcpServers": {"buildguard": {"command": "bg", "cwd": "./sub"}}}`, filepath.Join(env.ProjectDir, "sub")},
		{"codex", "[mcp_servers.buildguard]\ncommand = \"bg\"\ncwd = \"sub\"\n", filepath.Join(env.Home, ".codex", "sub")},
		{"windsurf", `{"mcpServers": {"buildguard": {"command": "bg", "cwd": "sub"}}}`, filepath.Join(env.Home, "sub")},
		{"cursor", `{"mcpServers": {"buildguard": {"command": "bg", "cwd": "/abs"}}}`, "/abs"},
	} {
		h, _ := Lookup(c.host)
		writeFile(t, h.File(env), c.file, 0o600)
		if got, err := ReadConfigured(h, env, os.LookupEnv); err != nil || got.Dir != c.want {
			t.Errorf("%s: Dir = %q, %v; want %q", c.host, got.Dir, err, c.want)
		}
	}
}

// Two hosts whose files are one file (a symlink) get both entries: the
// second edit is made on the first one's result, and the file is written
// once. A file two edits would read as different formats is refused.
func TestPlanOneFileReachedTwice(t *testing.T) {
	t.Parallel()
	env := testEnv(t)
	claude, _ := Lookup("claude")
	vscode, _ := Lookup("vscode")
	codex, _ := Lookup("codex")
	writeFile(t, claude.File(env), "{\"keep\": 1}\n", 0o644)
	os.MkdirAll(filepath.Dir(vscode.File(env)), 0o755)
	if err := os.Symlink(claude.File(env), vscode.File(env)); err != nil {
		t.Fatal(err)
	}
	p := NewPlanner(env)
	for _, h := range []Host{claude, vscode} {
		if err := p.Host(h, NewEntry(h, "/bin/bg", env.ProjectDir)); err != nil {
			t.Fatal(err)
		}
	}
	changes := p.Changes()
	if len(changes) != 1 || len(changes[0].Hosts) != 2 || changes[0].Describe() != "mcpServers.buildguard (Claude Code) and servers.buildguard (VS Code)" {
		t.Fatalf("changes = %+v", changes)
	}
	if err := changes[0].Write(); err != nil {
		t.Fatal(err)
	}
	for _, h := range []Host{claude, vscode} {
		if got, err := ReadConfigured(h, env, os.LookupEnv); err != nil || got.Command != "/bin/bg" {
			t.Errorf("%s's entry = %+v, %v", h.Name, got, err)
		}
	}
	if b, _ := os.ReadFile(claude.File(env)); !bytes.Contains(b, []byte(`"keep": 1`)) {
		t.Errorf("file now %s", b)
	}

	os.MkdirAll(filepath.Dir(codex.File(env)), 0o755)
	os.Symlink(claude.File(env), codex.File(env))
	p = NewPlanner(env)
	p.Host(claude, NewEntry(claude, "/bin/bg2", env.ProjectDir))
	if err := p.Host(codex, NewEntry(codex, "/bin/bg2", env.ProjectDir)); !errors.As(err, new(*Refusal)) || !strings.Contains(err.Error(), "is the same file as "+claude.File(env)) {
		t.Errorf("a JSON file reached as Codex's TOML = %v, want a refusal", err)
	}
}

// AGENTS.md and CLAUDE.md as one file (CLAUDE.md a link): one block.
func TestPlanSkillThroughLinkedFiles(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "AGENTS.md"), "# Agents\n", 0o644)
	os.Symlink("AGENTS.md", filepath.Join(dir, "CLAUDE.md"))
	p := NewPlanner(Env{ProjectDir: dir})
	for _, f := range SkillFiles(dir) {
		if err := p.Skill(f); err != nil {
			t.Fatal(err)
		}
	}
	changes := p.Changes()
	if len(changes) != 1 {
		t.Fatalf("%d changes, want one", len(changes))
	}
	changes[0].Write()
	if b, _ := os.ReadFile(filepath.Join(dir, "AGENTS.md")); bytes.Count(b, []byte(SkillBegin)) != 1 {
		t.Errorf("AGENTS.md:\n%s", b)
	}
}

// An edit whose result would pass the 1 MiB limit is refused: init would
// never read the file again.
func TestPlanRefusesAResultOverTheLimit(t *testing.T) {
	t.Parallel()
	eachHost(t, func(t *testing.T, h Host) {
		env := testEnv(t)
		pad := strings.Repeat("x", 1<<20-40)
		data := `{"pad": "` + pad + `"}`
		if h.Format == TOML {
			data = `pad = "` + pad + `"` + "\n"
		}
		writeFile(t, h.File(env), data, 0o644)
		_, err := Plan(h, env, NewEntry(h, "/bin/bg", env.ProjectDir))
		if !errors.As(err, new(*Refusal)) || !strings.Contains(err.Error(), "would be larger than the limit of 1 MiB with the "+h.Path()+" entry") {
			t.Errorf("Plan = %v, want a refusal", err)
		}
	})
}

// An entry the host would not start as buildguard over stdio, whatever
// command init writes into it, is refused unchanged, and --check says why
// (docs/hosts.md#1).
func TestEntriesTheHostWouldNotStart(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		host, doc, says string
	}{
		{"claude", `{"mcpServers": {"buildguard": {"type": "http", "url": "http://127.0.0.1:1/mcp"}}}`, `mcpServers.buildguard has "url", so the host connects to that URL instead of starting a command`},
		{"claude", `{"mcpServers": {"buildguard": {"type": "sse", "command": "x"}}}`, `mcpServers.buildguard has "type": "sse", so the host does not start a command for it`},
		{"cursor", `{"mcpServers": {"buildguard": {"command": "x", "disabled": true}}}`, `mcpServers.buildguard has "disabled": true`},
		{"windsurf", `{"mcpServers": {"buildguard": {"serverUrl": "http://127.0.0.1:1/mcp"}}}`, `has "serverUrl"`},
		{"gemini", `{"mcpServers": {"buildguard": {"httpUrl": "http://127.0.0.1:1/mcp"}}}`, `has "httpUrl"`},
		{"gemini", `{"mcp": {"excluded": ["buildguard"]}, "mcpServers": {}}`, `mcp.excluded lists buildguard`},
		{"gemini", `{"mcp": {"allowed": ["other"]}}`, `mcp.allowed does not list buildguard`},
		{"vscode", `{"servers": {"buildguard": {"type": "http", "url": "http://127.0.0.1:1/mcp"}}}`, `servers.buildguard has "url"`},
		{"codex", "[mcp_servers.buildguard]\ncommand = \"x\"\nenabled = false\n", `mcp_servers.buildguard has enabled = false`},
		{"codex", "[mcp_servers.buildguard]\nurl = \"http://127.0.0.1:1/mcp\"\n", `mcp_servers.buildguard has "url"`},
	} {
		h, _ := Lookup(c.host)
		_, _, err := edit(h, []byte(c.doc), NewEntry(h, "/bin/bg", "/p"))
		if !errors.Is(err, ErrWillNotStart) || !strings.Contains(err.Error(), c.says) {
			t.Errorf("%s %s: edit = %v, want a refusal saying %s", c.host, c.doc, err, c.says)
		}
		if _, err := ReadConfiguredData(h, []byte(c.doc)); (err == nil || !strings.Contains(err.Error(), c.says)) && !strings.Contains(c.doc, "allowed") && !strings.Contains(c.doc, "excluded") {
			t.Errorf("%s %s: ReadConfiguredData = %v, want it to say %s", c.host, c.doc, err, c.says)
		}
	}
	// VS Code's type is init's to write: an http type without a URL becomes stdio.
	h, _ := Lookup("vscode")
	if _, _, err := edit(h, []byte(`{"servers": {"buildguard": {"type": "http", "command": "x"}}}`), NewEntry(h, "/bin/bg", "/p")); err != nil {
		t.Errorf("vscode type http = %v", err)
	}
}

// A user-level entry that served another project is pointed at this one,
// and the user is told.
func TestPlanNotesAnotherProject(t *testing.T) {
	t.Parallel()
	env := testEnv(t)
	h, _ := Lookup("codex")
	writeFile(t, h.File(env), "[mcp_servers.buildguard]\ncommand = \"/bin/bg\"\nargs = [\"mcp\", \"--project-dir\", \"/srv/other\"]\n", 0o600)
	c, err := Plan(h, env, NewEntry(h, "/bin/bg", env.ProjectDir))
	if err != nil || len(c.Notes) != 1 || c.Notes[0] != "the Codex entry served the project /srv/other; it now serves "+env.ProjectDir+" (one entry serves one project)" {
		t.Errorf("Plan = %v, notes %q", err, c.Notes)
	}
}

// A file that changes between the plan and the write (another editor, a
// second init) is not written over: what changed stays.
func TestWriteRefusesAFileChangedSinceThePlan(t *testing.T) {
	t.Parallel()
	env := testEnv(t)
	h, _ := Lookup("claude")
	writeFile(t, h.File(env), `{"a": 1}`, 0o644)
	c, err := Plan(h, env, NewEntry(h, "/bin/bg", env.ProjectDir))
	if err != nil {
		t.Fatal(err)
	}
	writeFile(t, h.File(env), `{"a": 2}`, 0o644)
	if err := c.Write(); !errors.Is(err, ErrChanged) {
		t.Errorf("Write = %v, want ErrChanged", err)
	}
	if b, _ := os.ReadFile(h.File(env)); string(b) != `{"a": 2}` {
		t.Errorf("file now %s", b)
	}
	cursor, _ := Lookup("cursor")
	c, _ = Plan(cursor, env, NewEntry(cursor, "/bin/bg", env.ProjectDir))
	writeFile(t, cursor.File(env), `{}`, 0o644)
	if err := c.Write(); !errors.Is(err, ErrChanged) {
		t.Errorf("Write of a file that appeared = %v, want ErrChanged", err)
	}
}

// Settings elsewhere that disable or override our entry are read with the
// same bounds; one that cannot be read is named as not checked.
func TestOverrides(t *testing.T) {
	t.Parallel()
	env := testEnv(t)
	h, _ := Lookup("claude")
	writeFile(t, filepath.Join(env.Home, ".claude", "settings.json"), `{"disabledMcpjsonServers": ["other", "buildguard"]}`, 0o644)
	writeFile(t, filepath.Join(env.Home, ".claude.json"), "{}", 0o644)
	os.Truncate(filepath.Join(env.Home, ".claude.json"), 1<<20+1)
	problems, unchecked := Overrides(h, env)
	if len(problems) != 1 || !strings.HasSuffix(problems[0], ".claude/settings.json lists buildguard in disabledMcpjsonServers") {
		t.Errorf("problems = %q", problems)
	}
	if len(unchecked) != 1 || !strings.Contains(unchecked[0], ".claude.json (is larger than the limit of 1 MiB)") {
		t.Errorf("unchecked = %q", unchecked)
	}
}

// The plan foresees every write it can (docs/hosts.md#1): a file whose
// folder init would create behind a dangling link or where a file stands,
// and a file with a second name (a hard link) that a rename over one name
// would leave with the old content, are refused before anything is written.
func TestPlanForeseesEveryWrite(t *testing.T) {
	t.Parallel()
	claude, _ := Lookup("claude")
	vscode, _ := Lookup("vscode")
	windsurf, _ := Lookup("windsurf")
	for _, c := range []struct {
		name  string
		make  func(t *testing.T, env Env)
		hosts []Host
		says  string
	}{
		{"dangling link as the folder", func(t *testing.T, env Env) {
			if err := os.Symlink("nowhere", filepath.Join(env.ProjectDir, ".vscode")); err != nil {
				t.Fatal(err)
			}
		}, []Host{claude, vscode}, "is a symlink that does not resolve"},
		{"a link loop as the folder", func(t *testing.T, env Env) {
			if err := os.Symlink(".vscode", filepath.Join(env.ProjectDir, ".vscode")); err != nil {
				t.Fatal(err)
			}
		}, []Host{claude, vscode}, "is a symlink that does not resolve"},
		{"a file as the folder", func(t *testing.T, env Env) {
			writeFile(t, filepath.Join(env.ProjectDir, ".vscode"), "{}", 0o644)
		}, []Host{claude, vscode}, "on the way to it, is not a folder"},
		{"a file two folders up", func(t *testing.T, env Env) {
			writeFile(t, filepath.Join(env.Home, ".codeium"), "{}", 0o644)
		}, []Host{windsurf}, "/.codeium, on the way to it, is not a folder"},
		{"two hosts through a hard link", func(t *testing.T, env Env) {
			writeFile(t, claude.File(env), "{}\n", 0o644)
			os.MkdirAll(filepath.Dir(vscode.File(env)), 0o755)
			if err := os.Link(claude.File(env), vscode.File(env)); err != nil {
				t.Fatal(err)
			}
		}, []Host{claude, vscode}, "one file with 2 names (hard links)"},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			env := testEnv(t)
			c.make(t, env)
			p := NewPlanner(env)
			var err error
			for _, h := range c.hosts {
				if err = p.Host(h, NewEntry(h, "/bin/bg", env.ProjectDir)); err != nil {
					break
				}
			}
			var r *Refusal
			if !errors.As(err, &r) || !errors.Is(err, ErrNotWritable) || !strings.Contains(err.Error(), c.says) {
				t.Fatalf("plan = %v, want a refusal saying %q", err, c.says)
			}
		})
	}
}
