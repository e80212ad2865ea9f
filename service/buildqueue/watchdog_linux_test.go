package buildqueue

import (
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	osproc "github.com/buildguard/buildguard/internal/proc"
	"github.com/buildguard/buildguard/internal/testsupport/wait"
)

// startGroup starts script as the leader of its own process group, as a
// build's command, and waits for its members to be running.
func startGroup(t *testing.T, script string, members int) (group, *exec.Cmd) {
	t.Helper()
	cmd := exec.Command("sh", "-c", script)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	pgid := cmd.Process.Pid
	t.Cleanup(func() { _ = syscall.Kill(-pgid, syscall.SIGKILL); _ = cmd.Wait() })
	wait.For(t, 10*time.Second, "the group's processes", func() bool {
		ps, _ := osproc.Members(pgid, 0)
		return len(ps) == members
	})
	l, ok := osproc.Lookup(pgid)
	if !ok {
		t.Fatal("the group's leader is gone")
	}
	return group{PGID: pgid, Start: l.Start}, cmd
}

// TestWatchdogMessages: when the pipe ends, the watchdog ends the groups
// it was told run (with SIGTERM; with SIGKILL after the grace when they
// ignore SIGTERM), not the ones whose build it was told ended, and skips
// what it does not know.
func TestWatchdogMessages(t *testing.T) {
	t.Parallel()
	running, _ := startGroup(t, "sleep 600 & sleep 600 & wait", 3)
	stubborn, _ := startGroup(t, "trap '' TERM; sleep 600 & wait", 2)
	ended, _ := startGroup(t, "sleep 600 & wait", 2)
	var in strings.Builder
	fmt.Fprintf(&in, "watch %d 0 %d %d\n", running.PGID, running.Start, int64(time.Minute))
	fmt.Fprintf(&in, "watch %d 0 %d %d\n", stubborn.PGID, stubborn.Start, int64(100*time.Millisecond))
	fmt.Fprintf(&in, "watch %d 0 %d %d\n", ended.PGID, ended.Start, int64(time.Minute))
	fmt.Fprintf(&in, "done %d\nwatch 1 0 0 0\nwatch x\n%s\n", ended.PGID, strings.Repeat("z", 100))
	if code := WatchdogMain(strings.NewReader(in.String())); code != 0 {
		t.Errorf("WatchdogMain = %d, want 0: every process it watched ended", code)
	}
	for _, g := range []group{running, stubborn} {
		if ps, _ := osproc.Members(g.PGID, 0); len(ps) != 0 {
			t.Errorf("group %d still runs %+v after the watchdog", g.PGID, ps)
		}
	}
	if ps, _ := osproc.Members(ended.PGID, 0); len(ps) != 2 {
		t.Errorf("the group of an ended build runs %+v after the watchdog, want its two processes left alone", ps)
	}
}

// TestCloseAwayClosesInTheWatchdog: a file sent to the watchdog is not
// closed by this process (its pipe sees no EOF while the message waits),
// and the watchdog's read of the message releases it, the messages around
// it read as before.
func TestCloseAwayClosesInTheWatchdog(t *testing.T) {
	t.Parallel()
	watchdogEnd, ours, err := channel()
	if err != nil {
		t.Fatal(err)
	}
	defer watchdogEnd.Close()
	d := &Watchdog{log: discardWarn{}, w: ours}
	pr, pw, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer pr.Close()
	d.watch(group{PGID: 4242, Start: 7}, time.Second)
	if !d.closeAway(pw) {
		t.Fatal("closeAway did not send the file")
	}
	pw.Close()
	d.watch(group{PGID: 4343, Start: 8}, time.Second)
	d.Stop()

	if err := pr.SetReadDeadline(time.Now().Add(50 * time.Millisecond)); err != nil {
		t.Fatal(err)
	}
	if _, err := pr.Read(make([]byte, 1)); !errors.Is(err, os.ErrDeadlineExceeded) {
		t.Fatalf("the pipe's reader got %v before the watchdog read its message; want no EOF: the file must be held by the message, not closed here", err)
	}
	builds := readWatched(watchdogEnd)
	if _, ok := builds[4242]; !ok || len(builds) != 2 {
		t.Errorf("the watchdog read builds %v, want 4242 and 4343: the file's message must not spoil the others", builds)
	}
	if err := pr.SetReadDeadline(time.Now().Add(10 * time.Second)); err != nil {
		t.Fatal(err)
	}
	if _, err := pr.Read(make([]byte, 1)); err != io.EOF {
		t.Errorf("the pipe's reader got %v after the watchdog read the message, want EOF: the file is released in the watchdog", err)
	}
}

type discardWarn struct{}

func (discardWarn) Warn(string, ...any) {}
