//go:build unix

package hostconfig

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// owner returns path's owner and group.
func owner(t *testing.T, path string) (int, int) {
	t.Helper()
	fi, err := os.Lstat(path)
	if err != nil {
		t.Fatal(err)
	}
	st := fi.Sys().(*syscall.Stat_t)
	return int(st.Uid), int(st.Gid)
}

// Whether a file may be written is judged as the kernel judges the user,
// for the file and for its directory (the new copy is written beside it),
// and a file is never taken from its owner or group (docs/hosts.md#1). The
// cases run as root and as any other user: the plan judges another
// identity's rights over real files (owned by another uid when root can
// make them so).
func TestPlanJudgesWhatTheUserMayDo(t *testing.T) {
	t.Parallel()
	h, _ := Lookup("claude")
	root := os.Geteuid() == 0
	for name, c := range map[string]struct {
		// setup prepares the project directory and its .mcp.json (missing
		// when it writes none) and returns who runs init.
		setup func(t *testing.T, dir, path string) *Identity
		says  string
	}{
		"someone else's file": {func(t *testing.T, dir, path string) *Identity {
			writeFile(t, path, "{}", 0o644)
			return &Identity{UID: 12345, GIDs: []int{23456}}
		}, "cannot be written: you may not write it (owner "},
		"their file in a directory they may not write": {func(t *testing.T, dir, path string) *Identity {
			writeFile(t, path, "{}", 0o644)
			if root {
				os.Chown(path, 12345, 23456)
				return &Identity{UID: 12345, GIDs: []int{23456}}
			}
			os.Chmod(dir, 0o555)
			t.Cleanup(func() { os.Chmod(dir, 0o755) })
			return &Identity{UID: os.Getuid(), GIDs: []int{os.Getgid()}}
		}, "init replaces it with a new file written beside it, and you may not create files in "},
		"a file anyone may write, owned by someone else": {func(t *testing.T, dir, path string) *Identity {
			writeFile(t, path, "{}", 0o666)
			os.Chmod(dir, 0o777)
			return &Identity{UID: 12345, GIDs: []int{23456}}
		}, "and the new file would belong to you"},
		"their file, of a group they are not in": {func(t *testing.T, dir, path string) *Identity {
			writeFile(t, path, "{}", 0o666)
			os.Chmod(dir, 0o777)
			if root {
				os.Chown(path, 12345, 23456)
			}
			uid, _ := owner(t, path)
			return &Identity{UID: uid, GIDs: []int{99999}}
		}, "which you are not in, and the new file would get yours"},
		"a new file in a directory they may not write": {func(t *testing.T, dir, path string) *Identity {
			return &Identity{UID: 12345, GIDs: []int{23456}}
		}, "cannot be written: you may not create files in "},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			env := testEnv(t)
			path := h.File(env)
			env.As = c.setup(t, env.ProjectDir, path)
			before, _ := os.ReadFile(path)
			_, err := Plan(h, env, NewEntry(h, "/bin/bg", env.ProjectDir))
			if !errors.Is(err, ErrNotWritable) || !strings.Contains(err.Error(), c.says) || !strings.Contains(err.Error(), "Run init as the user who owns it") {
				t.Fatalf("Plan = %v, want a refusal saying %q", err, c.says)
			}
			if after, _ := os.ReadFile(path); string(after) != string(before) {
				t.Errorf("the file changed: %q", after)
			}
		})
	}

	t.Run("their own file", func(t *testing.T) {
		t.Parallel()
		env := testEnv(t)
		writeFile(t, h.File(env), "{}", 0o644)
		uid, gid := owner(t, h.File(env))
		env.As = &Identity{UID: uid, GIDs: []int{gid}}
		if _, err := Plan(h, env, NewEntry(h, "/bin/bg", env.ProjectDir)); err != nil {
			t.Errorf("Plan = %v", err)
		}
	})
}

// Without a named identity the kernel judges this process (access(2)): a
// file in a directory this user may not write is refused before anything
// is written. Root may write there, so only other users see the refusal.
func TestPlanAsksTheKernel(t *testing.T) {
	t.Parallel()
	h, _ := Lookup("claude")
	env := testEnv(t)
	path := h.File(env)
	writeFile(t, path, "{}", 0o644)
	os.Chmod(env.ProjectDir, 0o555)
	defer os.Chmod(env.ProjectDir, 0o755)
	_, err := Plan(h, env, NewEntry(h, "/bin/bg", env.ProjectDir))
	if os.Geteuid() == 0 {
		if err != nil {
			t.Errorf("Plan as root = %v", err)
		}
		return
	}
	if !errors.Is(err, ErrNotWritable) {
		t.Errorf("Plan = %v, want a refusal", err)
	}
}

// Run as root with another user's HOME (sudo keeping HOME), new folders
// and files in that home take the owner of the folder they are created
// in; as any other user they are the user's, as that folder is.
func TestWriteNewFilesTakeTheFolderOwner(t *testing.T) {
	t.Parallel()
	env := testEnv(t)
	if err := os.MkdirAll(env.Home, 0o755); err != nil {
		t.Fatal(err)
	}
	if os.Geteuid() == 0 {
		if err := os.Chown(env.Home, 12345, 23456); err != nil {
			t.Fatal(err)
		}
	}
	uid, gid := owner(t, env.Home)
	for _, name := range []string{"codex", "windsurf"} {
		h, _ := Lookup(name)
		c, err := Plan(h, env, NewEntry(h, "/bin/bg", env.ProjectDir))
		if err != nil {
			t.Fatal(err)
		}
		if err := c.Write(); err != nil {
			t.Fatal(err)
		}
	}
	for _, p := range []string{".codex", ".codex/config.toml", ".codeium", ".codeium/windsurf", ".codeium/windsurf/mcp_config.json"} {
		if u, g := owner(t, filepath.Join(env.Home, p)); u != uid || g != gid {
			t.Errorf("%s is owned by %d:%d, want the home's %d:%d", p, u, g, uid, gid)
		}
	}
}

// New files and folders honour the umask; an existing file keeps its
// mode whatever the umask. Not parallel: the umask is the process's.
func TestWriteHonoursTheUmask(t *testing.T) {
	old := syscall.Umask(0o077)
	defer syscall.Umask(old)
	env := testEnv(t)
	h, _ := Lookup("vscode")
	c, err := Plan(h, env, NewEntry(h, "/bin/bg", env.ProjectDir))
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Write(); err != nil {
		t.Fatal(err)
	}
	for p, want := range map[string]os.FileMode{".vscode": 0o700, ".vscode/mcp.json": 0o600} {
		if fi, err := os.Stat(filepath.Join(env.ProjectDir, p)); err != nil || fi.Mode().Perm() != want {
			t.Errorf("%s: mode %v (%v), want %v", p, fi.Mode().Perm(), err, want)
		}
	}
	claude, _ := Lookup("claude")
	writeFile(t, claude.File(env), "{}", 0o664)
	c, err = Plan(claude, env, NewEntry(claude, "/bin/bg", env.ProjectDir))
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Write(); err != nil {
		t.Fatal(err)
	}
	if fi, _ := os.Stat(claude.File(env)); fi.Mode().Perm() != 0o664 {
		t.Errorf("existing file: mode %v, want 0664 kept", fi.Mode().Perm())
	}
}
