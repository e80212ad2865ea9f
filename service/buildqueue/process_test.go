//go:build unix

package buildqueue

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestKilledHolderHandsOver: SIGKILL of the process that holds the turn
// leaves nobody blocked: the next build starts within a second.
func TestKilledHolderHandsOver(t *testing.T) {
	dir := project(t)
	holder := startHelper(t, dir)
	holder.expect(t, "admitted")
	next := queued(t, newQueue(), Request{Project: dir, Name: "next"})
	killed := time.Now()
	if err := holder.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	o := await(t, next)
	if o.err != nil {
		t.Fatal(o.err)
	}
	defer o.turn.Release(nil)
	if gap := o.at.Sub(killed); gap > time.Second {
		t.Fatalf("the next build started %s after the holder was killed, want within 1s", gap)
	}
	t.Logf("handover after SIGKILL: %s", o.at.Sub(killed))
}

// TestKilledWaiterLeavesNoTrace: a waiter killed in the line is skipped; the
// build behind it runs as soon as the holder releases.
func TestKilledWaiterLeavesNoTrace(t *testing.T) {
	dir := project(t)
	q := newQueue()
	first, err := q.Wait(context.Background(), Request{Project: dir, Name: "first"})
	if err != nil {
		t.Fatal(err)
	}
	waiter := startHelper(t, dir)
	waiter.expect(t, "status 2")
	third := queued(t, q, Request{Project: dir, Name: "third"})
	if err := waiter.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	_ = waiter.cmd.Wait()
	first.Release(nil)
	o := await(t, third)
	if o.err != nil {
		t.Fatal(o.err)
	}
	o.turn.Release(nil)
	if got := tickets(t, dir); len(got) != 0 {
		t.Errorf("tickets left behind: %v", got)
	}
}

// TestCoalesceAcrossProcesses: a build in another process joins an
// identical waiting build of ours and gets its result.
func TestCoalesceAcrossProcesses(t *testing.T) {
	dir := project(t)
	q := newQueue()
	running, err := q.Wait(context.Background(), Request{Project: dir, Name: "x"})
	if err != nil {
		t.Fatal(err)
	}
	leader := queued(t, q, Request{Project: dir, Name: "classes", Key: "classes"})
	joiner := startHelper(t, dir, "BUILDQUEUE_KEY=classes")
	joiner.expect(t, "status")
	running.Release(nil)
	o := await(t, leader)
	if o.err != nil {
		t.Fatal(o.err)
	}
	o.turn.Release([]byte(`{"outcome":"ok","build":"classes"}`))
	if got := joiner.expect(t, "joined"); !strings.Contains(got, `{"outcome":"ok","build":"classes"}`) {
		t.Fatalf("the joined process got %q", got)
	}
}

// TestKilledLeaderJoinerRuns: when the build a process joined dies without
// a result, the joined one runs a build of its own.
func TestKilledLeaderJoinerRuns(t *testing.T) {
	dir := project(t)
	q := newQueue()
	running, err := q.Wait(context.Background(), Request{Project: dir, Name: "x"})
	if err != nil {
		t.Fatal(err)
	}
	leader := startHelper(t, dir, "BUILDQUEUE_KEY=k")
	leader.expect(t, "status 2")
	joined := queued(t, q, Request{Project: dir, Name: "classes", Key: "k"})
	running.Release(nil)
	leader.expect(t, "admitted")
	if err := leader.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	o := await(t, joined)
	if o.err != nil {
		t.Fatal(o.err)
	}
	if _, ok := o.turn.Joined(); ok {
		t.Fatal("a result was made up for a build that died")
	}
	o.turn.Release(nil)
}

// TestAnotherUsersQueueRefused: a .buildguard or queue directory of another
// user is refused (its owner could hold our builds back for ever).
func TestAnotherUsersQueueRefused(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("making a directory another user's needs root")
	}
	for _, which := range []string{StateDir, filepath.Join(StateDir, QueueDir)} {
		dir := project(t)
		if err := os.MkdirAll(filepath.Join(dir, which), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.Chown(filepath.Join(dir, which), 65534, 65534); err != nil {
			t.Fatal(err)
		}
		_, err := newQueue().Wait(context.Background(), Request{Project: dir, Name: "x"})
		if !errors.Is(err, ErrUnusable) || !strings.Contains(err.Error(), "belongs to another user") {
			t.Errorf("%s of another user: Wait returned %v", which, err)
		}
	}
}
