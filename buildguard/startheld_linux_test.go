package buildguard

import (
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/buildguard/buildguard/internal/testsupport/wait"
)

// TestStartedBeforeTheCommandRuns: both runners call Started after the
// command's exec and before it runs anything of its own, so a supervisor
// killed while it records the build's processes leaves none of them
// running unrecorded (docs/decisions.md#D22).
func TestStartedBeforeTheCommandRuns(t *testing.T) {
	sh, err := exec.LookPath("sh")
	if err != nil {
		t.Skip("no sh:", err)
	}
	sh, _ = filepath.EvalSymlinks(sh)
	runners := map[string]func(Command) Runner{
		"exec": func(c Command) Runner { return NewExecRunner(c) },
		"pty":  func(c Command) Runner { return NewPTYRunner(c) },
	}
	for name, newRunner := range runners {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			ran := filepath.Join(dir, "ran")
			calls := 0
			c := Command{
				Argv:   []string{"sh", "-c", "echo > ran"},
				Dir:    dir,
				Stdin:  strings.NewReader(""),
				Stdout: io.Discard,
				Stderr: io.Discard,
				Started: func(pid int, _ bool) {
					calls++
					if exe, _ := os.Readlink("/proc/" + strconv.Itoa(pid) + "/exe"); exe != sh {
						t.Errorf("Started saw the child run %q, want the command %q: before its exec", exe, sh)
					}
					if wait.Until(300*time.Millisecond, func() bool { _, err := os.Stat(ran); return err == nil }) {
						t.Error("the command ran before Started returned")
					}
				},
			}
			r := newRunner(c)
			if err := r.Start(); err != nil {
				t.Fatal(err)
			}
			if code, err := r.Wait(); code != 0 || err != nil {
				t.Fatalf("Wait = %d, %v; want 0, nil", code, err)
			}
			if calls != 1 {
				t.Errorf("Started was called %d times, want 1", calls)
			}
			if _, err := os.Stat(ran); err != nil {
				t.Errorf("the command did not run once Started returned: %v", err)
			}
		})
	}
}

// TestHoldableSkipsRaisedPrivileges: a traced exec does not raise
// privileges, so a set-user-ID or set-group-ID command starts unheld.
func TestHoldableSkipsRaisedPrivileges(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct {
		mode os.FileMode
		want bool
	}{
		{0o755, true},
		{0o755 | os.ModeSetuid, false},
		{0o755 | os.ModeSetgid, false},
	} {
		path := filepath.Join(dir, "cmd"+strconv.Itoa(int(tc.mode)))
		if err := os.WriteFile(path, []byte("#!/bin/sh\n"), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(path, tc.mode); err != nil {
			t.Fatal(err)
		}
		if got := holdable(path); got != tc.want {
			t.Errorf("holdable(%v) = %v, want %v", tc.mode, got, tc.want)
		}
	}
	if !holdable(filepath.Join(dir, "missing")) {
		t.Error("a missing file is not holdable; its exec fails alike either way")
	}
}
