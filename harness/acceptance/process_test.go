//go:build unix

package acceptance

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// alive reports whether pid still exists (and is not a zombie we could
// signal: kill 0 succeeds on zombies, so read /proc where it exists).
func alive(pid int) bool {
	if b, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "stat")); err == nil {
		fields := strings.Fields(string(b))
		return len(fields) > 2 && fields[2] != "Z"
	}
	return syscall.Kill(pid, 0) == nil
}

func TestRunCancelKillsTheWholeGroup(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	pidFile := filepath.Join(dir, "pid")
	// The grandchild ignores SIGTERM, so only the SIGKILL after cancelGrace
	// can end it.
	script := `trap '' TERM; sh -c 'trap "" TERM; echo $$ > "$1.tmp"; mv "$1.tmp" "$1"; while :; do sleep 1; done' x "$1" & wait`
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		_, err := run(ctx, step{argv: []string{"sh", "-c", script, "sh", pidFile}, dir: dir, log: filepath.Join(dir, "step.log")})
		done <- err
	}()
	if err := waitForFile(pidFile, 10*time.Second); err != nil {
		cancel()
		t.Fatal(err)
	}
	b, _ := os.ReadFile(pidFile)
	pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil {
		t.Fatalf("pid file %q: %v", b, err)
	}
	if !alive(pid) {
		t.Fatalf("grandchild %d is not running before the cancel", pid)
	}
	cancel()
	select {
	case err := <-done:
		if !errors.Is(err, context.Canceled) {
			t.Errorf("run err = %v, want context.Canceled", err)
		}
	case <-time.After(cancelGrace + 10*time.Second):
		t.Fatal("run did not return after the cancel")
	}
	deadline := time.Now().Add(5 * time.Second)
	for alive(pid) && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	if alive(pid) {
		syscall.Kill(pid, syscall.SIGKILL)
		t.Fatalf("grandchild %d outlived the cancelled step", pid)
	}
}

func TestRunLogsCombinedOutputAndExitCode(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	log := filepath.Join(dir, "x.log")
	res, err := run(context.Background(), step{argv: []string{"sh", "-c", "echo out; echo err >&2; exit 3"}, dir: dir, log: log})
	if err != nil {
		t.Fatal(err)
	}
	if res.exitCode != 3 {
		t.Errorf("exit = %d, want 3", res.exitCode)
	}
	got := readFile(t, log)
	for _, want := range []string{"out\n", "err\n", "# harness: exit 3"} {
		if !strings.Contains(got, want) {
			t.Errorf("log lacks %q:\n%s", want, got)
		}
	}
	if _, err := run(context.Background(), step{argv: []string{filepath.Join(dir, "no such tool")}, dir: dir, log: log}); err == nil {
		t.Error("a missing executable ran without error")
	}
}

func waitForFile(path string, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	for time.Now().Before(deadline) {
		if _, err := os.Stat(path); err == nil {
			return nil
		}
		time.Sleep(20 * time.Millisecond)
	}
	return errors.New("timed out waiting for " + path)
}
