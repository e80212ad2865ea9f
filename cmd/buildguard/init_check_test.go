//go:build unix

package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/buildguard/buildguard/internal/testsupport/testbin"
	"github.com/buildguard/buildguard/internal/testsupport/wait"
	"github.com/buildguard/buildguard/service/tools"
)

// TestInitCheckRealBinary writes every host's entry with the shipped binary
// on PATH and lets `init --check` start each one as its host would: six OK
// lines, each with every tool the server has.
// With the binary moved away, the project files' buildguard is no longer
// on PATH and the user files' command is a wrong path: each host FAILs
// with the reason, exit 1 (docs/decisions.md#D15).
func TestInitCheckRealBinary(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	bin := testbin.Build(t, filepath.Join(root))
	project, home := filepath.Join(root, "project"), filepath.Join(root, "home")
	for _, d := range []string{project, home} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	run := func(bin string, args ...string) (string, string, int) {
		cmd := exec.Command(bin, args...)
		cmd.Dir = project
		cmd.Env = append(os.Environ(), "HOME="+home, "CODEX_HOME=", "BUILDGUARD_LOG_LEVEL=", "PATH="+filepath.Dir(bin)+":/usr/bin:/bin")
		var stdout, stderr strings.Builder
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		err := cmd.Run()
		code := 0
		if ee, ok := err.(*exec.ExitError); ok {
			code = ee.ExitCode()
		} else if err != nil {
			t.Fatal(err)
		}
		return stdout.String(), stderr.String(), code
	}
	if _, stderr, code := run(bin, "init", "--all"); code != 0 {
		t.Fatalf("init --all = %d: %s", code, stderr)
	}
	stdout, stderr, code := run(bin, "init", "--check")
	ok := regexp.MustCompile(fmt.Sprintf(`(?m)^OK   \S+ +\S+: %d tools, protocol \S+$`, len(tools.Names())))
	if code != 0 || len(ok.FindAllString(stdout, -1)) != 6 {
		t.Fatalf("init --check = %d, want six OK lines:\n%s%s", code, stdout, stderr)
	}

	moved := bin + ".moved"
	if err := os.Rename(bin, moved); err != nil {
		t.Fatal(err)
	}
	stdout, _, code = run(moved, "init", "--check")
	fail := regexp.MustCompile(`(?m)^FAIL \S+ +\S+: starting ` + regexp.QuoteMeta(bin) + ` mcp --project-dir \S+: fork/exec \S+: no such file or directory$`)
	notOnPath := regexp.MustCompile(`(?m)^FAIL \S+ +\S+: starting buildguard mcp.*: buildguard is not on the PATH the host passes to the server \(PATH=` + regexp.QuoteMeta(filepath.Dir(bin)) + `:/usr/bin:/bin\), so the host could not start it either: install buildguard in a directory on PATH, or run buildguard init --absolute`)
	if code != 1 || len(fail.FindAllString(stdout, -1)) != 2 || len(notOnPath.FindAllString(stdout, -1)) != 4 {
		t.Errorf("init --check with the binary gone = %d, want six FAIL lines with the reason:\n%s", code, stdout)
	}
}

// A server that never answers, ignores SIGTERM and starts a process of its
// own FAILs at the 10 s deadline, and its whole process group is gone when
// --check returns: no wait past the deadline, nothing left running.
func TestInitCheckKillsAServerThatIgnoresSIGTERM(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	bin := testbin.Build(t, root)
	project := filepath.Join(root, "project")
	pids := filepath.Join(root, "pids")
	script := `trap '' TERM; sleep 300 & echo $! > "$1.tmp"; echo $$ >> "$1.tmp"; mv "$1.tmp" "$1"; while :; do sleep 1; done`
	entry := fmt.Sprintf(`{"mcpServers": {"buildguard": {"command": "/bin/sh", "args": [%q, %q, "sh", %q, "--project-dir", %q]}}}`, "-c", script, pids, project)
	if err := os.MkdirAll(project, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(project, ".mcp.json"), []byte(entry), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, "init", "--check", "--host", "claude", "--project-dir", project)
	cmd.Env = append(os.Environ(), "HOME="+root)
	start := time.Now()
	out, err := cmd.Output()
	took := time.Since(start)
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 1 || !strings.Contains(string(out), "no answer within 10s") {
		t.Fatalf("init --check = %v:\n%s", err, out)
	}
	if took > 13*time.Second {
		t.Errorf("init --check took %s; the deadline is 10 s", took)
	}
	b, err := os.ReadFile(pids)
	if err != nil {
		t.Fatalf("the server never wrote its pids: %v", err)
	}
	var list []int
	for _, f := range strings.Fields(string(b)) {
		pid, _ := strconv.Atoi(f)
		list = append(list, pid)
	}
	if left := wait.GoneWithin(2*time.Second, list...); len(left) > 0 {
		for _, pid := range left {
			syscall.Kill(pid, syscall.SIGKILL)
		}
		t.Errorf("processes of the server still run after --check: %v", left)
	}
}

// SIGTERM or SIGINT to `init --check` while a server is under check ends
// the server's whole process group before init exits 128+signal: nothing
// init started keeps running (docs/hosts.md#1).
func TestInitCheckEndsTheServerOnASignal(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	bin := testbin.Build(t, root)
	for _, sig := range []syscall.Signal{syscall.SIGTERM, syscall.SIGINT} {
		t.Run(sig.String(), func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			project, pids := filepath.Join(dir, "project"), filepath.Join(dir, "pids")
			script := `trap '' TERM INT; sleep 300 & echo $! > "$1.tmp"; echo $$ >> "$1.tmp"; mv "$1.tmp" "$1"; while :; do sleep 1; done`
			entry := fmt.Sprintf(`{"mcpServers": {"buildguard": {"command": "/bin/sh", "args": [%q, %q, "sh", %q, "--project-dir", %q]}}}`, "-c", script, pids, project)
			if err := os.MkdirAll(project, 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(project, ".mcp.json"), []byte(entry), 0o644); err != nil {
				t.Fatal(err)
			}
			cmd := exec.Command(bin, "init", "--check", "--host", "claude", "--project-dir", project)
			cmd.Env = append(os.Environ(), "HOME="+dir)
			var stderr strings.Builder
			cmd.Stderr = &stderr
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			list := wait.PIDFile(t, 8*time.Second, pids)
			defer func() {
				for _, pid := range list {
					syscall.Kill(pid, syscall.SIGKILL)
				}
			}()
			if err := cmd.Process.Signal(sig); err != nil {
				t.Fatal(err)
			}
			err := cmd.Wait()
			if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 128+int(sig) || !strings.Contains(stderr.String(), "interrupted") {
				t.Errorf("init --check after %v = %v, want exit %d:\n%s", sig, err, 128+int(sig), stderr.String())
			}
			if left := wait.GoneWithin(2*time.Second, list...); len(left) > 0 {
				t.Errorf("processes of the server still run after init --check ended: %v", left)
			}
		})
	}
}
