//go:build unix

package safebuild

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// outsideLogs makes a directory outside the project holding n files named
// like build logs and an owner file, as someone else's folder would.
func outsideLogs(t *testing.T, n int) string {
	t.Helper()
	dir := t.TempDir()
	for i := range n {
		name := filepath.Join(dir, fmt.Sprintf("20200101T000000%03dZ-x.log", i))
		if err := os.WriteFile(name, []byte("precious"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(dir, OwnerFile), []byte("someone-elses-owner\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

func countFiles(t *testing.T, dir string) int {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	return len(entries)
}

// requireRefusedUntouched runs a build and requires it refused before the
// agent was asked for anything, its command not run.
func requireRefusedUntouched(t *testing.T, f *fixture, want string) *Result {
	t.Helper()
	marker := filepath.Join(t.TempDir(), "ran")
	res := f.builder.Run(context.Background(), f.request(t, "compile", marker, "X=1"))
	if res.Outcome != OutcomeRefused || res.Owner != nil || res.Output.LogFile != nil {
		t.Fatalf("outcome %s owner %v log %v: %s", res.Outcome, res.Owner, res.Output.LogFile, res.Detail)
	}
	if !strings.Contains(res.Detail, want) || !strings.HasSuffix(res.Detail, "the agent was asked for nothing: it holds nothing for this build") {
		t.Errorf("detail %q does not say %q and that the agent was asked for nothing", res.Detail, want)
	}
	if _, err := os.Stat(marker); err == nil {
		t.Error("the command ran")
	}
	if f.agent.Received("BUILD ") {
		t.Errorf("the agent was asked for a hold: %q", f.agent.Commands())
	}
	return res
}

// A symlinked .buildguard, or .buildguard/logs, is refused: nothing is
// written to its target and no file there is removed (docs/decisions.md#D21).
func TestRunRefusesSymlinkedStateDir(t *testing.T) {
	t.Parallel()
	for _, link := range []string{StateDir, filepath.Join(StateDir, "logs")} {
		t.Run(filepath.Base(link), func(t *testing.T) {
			t.Parallel()
			f := newFixture(t)
			outside := outsideLogs(t, 12)
			if err := os.MkdirAll(filepath.Dir(filepath.Join(f.dir, link)), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.Symlink(outside, filepath.Join(f.dir, link)); err != nil {
				t.Fatal(err)
			}
			requireRefusedUntouched(t, f, "is a symlink")
			if n := countFiles(t, outside); n != 13 {
				t.Errorf("the folder the link points at has %d files, want its 13 untouched", n)
			}
		})
	}
}

// An owner file that is a symlink is never read through: its target's token
// would let this project release another project's hold.
func TestRunRefusesSymlinkedOwnerFile(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	outside := outsideLogs(t, 0)
	if err := os.MkdirAll(filepath.Join(f.dir, StateDir), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(outside, OwnerFile), filepath.Join(f.dir, StateDir, OwnerFile)); err != nil {
		t.Fatal(err)
	}
	requireRefusedUntouched(t, f, "is a symlink")
}

// Rotation removes only files the product wrote: a log's name, a regular
// file, this user's. Another user's file, a symlink and a directory with a
// log's name stay, and so does what a symlink points at.
func TestRotationRemovesOnlyOurLogs(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	logs := LogDir(f.dir)
	if err := os.MkdirAll(logs, 0o755); err != nil {
		t.Fatal(err)
	}
	target := filepath.Join(t.TempDir(), "target")
	if err := os.WriteFile(target, []byte("precious"), 0o644); err != nil {
		t.Fatal(err)
	}
	keep := map[string]func(string) error{
		"20000101T000000001Z-link.log":    func(p string) error { return os.Symlink(target, p) },
		"20000101T000000002Z-dir.log":     func(p string) error { return os.Mkdir(p, 0o755) },
		"20000101T000000003Z-foreign.log": func(p string) error { return writeForeign(t, p) },
	}
	for name, make := range keep {
		if err := make(filepath.Join(logs, name)); err != nil {
			t.Fatal(err)
		}
	}
	for i := range 12 { // ours, newer than the others
		name := filepath.Join(logs, fmt.Sprintf("20010101T000000%03dZ-ours.log", i))
		if err := os.WriteFile(name, []byte("old log"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	res := f.builder.Run(context.Background(), f.request(t, "compile", f.classes, "A=1"))
	if res.Outcome != OutcomeOK {
		t.Fatalf("outcome %s: %s", res.Outcome, res.Detail)
	}
	for name := range keep {
		if _, err := os.Lstat(filepath.Join(logs, name)); err != nil {
			t.Errorf("%s was removed: %v", name, err)
		}
	}
	if b, err := os.ReadFile(target); err != nil || string(b) != "precious" {
		t.Errorf("the symlink's target: %q, %v", b, err)
	}
	ours := 0
	entries, _ := os.ReadDir(logs)
	for _, e := range entries {
		if _, kept := keep[e.Name()]; !kept {
			ours++
		}
	}
	if ours != KeptLogs {
		t.Errorf("%d of our logs left, want %d", ours, KeptLogs)
	}
}

// writeForeign writes a file that belongs to another user; the test is
// skipped where this process cannot give a file away (not root).
func writeForeign(t *testing.T, path string) error {
	if err := os.WriteFile(path, []byte("someone-elses-owner\n"), 0o644); err != nil {
		return err
	}
	if err := os.Lchown(path, 4242, 4242); err != nil {
		t.Skipf("cannot give a file to another user here: %v", err)
	}
	return nil
}

// A log folder that cannot be written is found before the hold is taken:
// the build is refused with nothing asked of the agent, not run after the
// hold and reported as exit 127 (docs/safe-build.md#9).
func TestRunUnwritableLogFolderRefusedBeforeTheHold(t *testing.T) {
	t.Parallel()
	t.Run("logs-is-a-file", func(t *testing.T) {
		t.Parallel()
		f := newFixture(t)
		if err := os.MkdirAll(filepath.Join(f.dir, StateDir), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(LogDir(f.dir), nil, 0o644); err != nil {
			t.Fatal(err)
		}
		requireRefusedUntouched(t, f, "the build log cannot be written")
	})
	t.Run("read-only", func(t *testing.T) {
		t.Parallel()
		if os.Geteuid() == 0 {
			t.Skip("root writes into a read-only folder")
		}
		f := newFixture(t)
		if err := os.MkdirAll(LogDir(f.dir), 0o555); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { os.Chmod(LogDir(f.dir), 0o755) })
		requireRefusedUntouched(t, f, "the build log cannot be written")
	})
}

// An owner file of another user is not ours: it is refused, never used.
func TestRunRefusesAForeignOwnerFile(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	if err := os.MkdirAll(filepath.Join(f.dir, StateDir), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := writeForeign(t, filepath.Join(f.dir, StateDir, OwnerFile)); err != nil {
		t.Fatal(err)
	}
	requireRefusedUntouched(t, f, "belongs to another user")
}

// The logs folder is used through the handle opened when it was checked:
// swapped for a symlink afterwards, nothing is created or removed where the
// link points.
func TestLogDirIsUsedThroughItsHandle(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	d, err := openLogDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	outside := outsideLogs(t, 1)
	victim := "20200101T000000000Z-x.log"
	moved := filepath.Join(dir, StateDir, "moved")
	if err := os.Rename(LogDir(dir), moved); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, LogDir(dir)); err != nil {
		t.Fatal(err)
	}
	f, err := d.create("20261202T000000000Z-new.log")
	if err != nil {
		t.Fatal(err)
	}
	f.Close()
	if err := d.remove(victim); err == nil {
		t.Error("removed a file that is not in the folder that was checked")
	}
	if _, err := os.Stat(filepath.Join(moved, "20261202T000000000Z-new.log")); err != nil {
		t.Errorf("the log was not created in the folder that was checked: %v", err)
	}
	if n := countFiles(t, outside); n != 2 {
		t.Errorf("the link's target has %d files, want its 2 untouched", n)
	}
}

// TestStateDirIgnoresItself: a state directory buildguard creates holds a
// .gitignore of "*", so a build leaves nothing of .buildguard/ in the
// user's git status; one the user made is given none, and a user's
// .gitignore there is never replaced (docs/safe-build.md#9).
func TestStateDirIgnoresItself(t *testing.T) {
	t.Parallel()
	git, err := exec.LookPath("git")
	if err != nil {
		t.Skip("no git:", err)
	}
	f := newFixture(t)
	run := func(args ...string) string {
		t.Helper()
		cmd := exec.Command(git, append([]string{"-c", "user.name=t", "-c", "user.email=t@t.invalid", "-C", f.dir}, args...)...)
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
		return string(out)
	}
	run("init", "-q")
	run("add", "-A")
	run("commit", "-q", "--allow-empty", "-m", "project")
	res := f.builder.Run(context.Background(), f.request(t, "fail", "3"))
	if res.Output.LogFile == nil {
		t.Fatalf("the build wrote no log: %+v", res)
	}
	if status := run("status", "--porcelain", "--untracked-files=all"); strings.Contains(status, StateDir) {
		t.Errorf("git status shows the state directory:\n%s", status)
	}
	if data, err := os.ReadFile(filepath.Join(f.dir, StateDir, ".gitignore")); err != nil || string(data) != "*\n" {
		t.Errorf(".buildguard/.gitignore %q, %v", data, err)
	}

	for _, tc := range []struct {
		name    string
		prepare func(state string)
		want    string // the .gitignore afterwards; "" none
	}{
		{"made by buildguard", func(string) {}, "*\n"},
		{"made by the user", func(state string) { os.Mkdir(state, 0o755) }, ""},
		{"the user's .gitignore", func(state string) {
			os.Mkdir(state, 0o755)
			os.WriteFile(filepath.Join(state, ".gitignore"), []byte("logs/\n"), 0o644)
		}, "logs/\n"},
	} {
		dir := t.TempDir()
		state := filepath.Join(dir, StateDir)
		tc.prepare(state)
		d, err := openLogDir(dir)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		d.Close()
		data, err := os.ReadFile(filepath.Join(state, ".gitignore"))
		if string(data) != tc.want || (tc.want == "") != errors.Is(err, os.ErrNotExist) {
			t.Errorf("%s: .gitignore %q, %v; want %q", tc.name, data, err, tc.want)
		}
	}
}
