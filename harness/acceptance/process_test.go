//go:build unix

package acceptance

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/buildguard/buildguard/internal/proc"
	"github.com/buildguard/buildguard/internal/testsupport/wait"
)

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
	pids, err := wait.PIDFileWithin(pidFile, 10*time.Second)
	if err != nil || len(pids) != 1 {
		cancel()
		t.Fatalf("pid file: %v %v", pids, err)
	}
	pid := pids[0]
	if proc.Gone(pid) {
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
	if left := wait.GoneWithin(5*time.Second, pid); len(left) > 0 {
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
