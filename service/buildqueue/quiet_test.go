package buildqueue

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"
)

// settle makes the line of dir quiet for its waiting builds: its
// directory's time of change goes an hour back, under the queue's lock, so
// no look is under way; then it waits until each of the n builds waiting
// in q has looked at it once since (each looks once at a change).
func settle(t *testing.T, q *Queue, dir string, n int) {
	t.Helper()
	qd, err := queueDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	l := &line{dir: qd, capacity: 1}
	var before int64
	if err := l.locked(context.Background(), func() error {
		before = q.looks.Load()
		old := time.Now().Add(-time.Hour)
		return os.Chtimes(qd, old, old)
	}); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(30 * time.Second)
	for q.looks.Load() < before+int64(n) {
		if time.Now().After(deadline) {
			t.Fatalf("%d of %d waiting builds looked at the changed line within 30 s", q.looks.Load()-before, n)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// TestQuietLineNotRead: builds waiting in a line where nothing changes
// read none of its tickets (a look at every ticket of a line of 33, every
// 3 s, cost each of 32 waiting `build run` processes 16 ms of CPU a
// minute, docs/performance.md#5.7); they check the directory's time of
// change, half as often after each quiet check up to their heartbeat (2 s
// here: in a short line, a check every second is six each in 6 s; backing
// off, three), and their heartbeats still come, their waits moving on.
func TestQuietLineNotRead(t *testing.T) {
	dir := project(t)
	q := newQueue()
	first, err := q.Wait(context.Background(), Request{Project: dir, Name: "first"})
	if err != nil {
		t.Fatal(err)
	}
	const n = 8
	var reports atomic.Int64
	var waited atomic.Int64 // the longest wait reported
	var waits []<-chan outcome
	for i := range n {
		waits = append(waits, queued(t, q, Request{Project: dir, Name: fmt.Sprintf("w%d", i), Heartbeat: 2 * time.Second,
			Report: func(s Status) {
				reports.Add(1)
				if d := int64(s.Waited); d > waited.Load() {
					waited.Store(d)
				}
			}}))
	}
	settle(t, q, dir, n)
	before, checks, reported, longest := q.looks.Load(), q.checks.Load(), reports.Load(), waited.Load()
	time.Sleep(6 * time.Second) // the time being measured, not a wait for readiness
	if looks := q.looks.Load() - before; looks != 0 {
		t.Errorf("%d builds waiting in a line where nothing changed read it %d times in 6 s", n, looks)
	}
	if c := q.checks.Load() - checks; c > 4*n {
		t.Errorf("%d builds waiting in a line where nothing changed checked it %d times in 6 s, want at most %d", n, c, 4*n)
	}
	if reports.Load() == reported || waited.Load() <= longest {
		t.Errorf("no heartbeat with a longer wait came in 6 s (reports %d, then %d)", reported, reports.Load())
	}
	first.Release(nil)
	for _, w := range waits {
		o := await(t, w)
		if o.err != nil {
			t.Fatal(o.err)
		}
		o.turn.Release(nil)
	}
}

// TestQuietLineSeesStart: a build waiting in a quiet line is told when the
// build ahead of it starts, which rewrites that build's ticket and adds or
// removes none: the write marks the directory changed. The build ahead
// waits for the user's only build slot, held by another project's build.
func TestQuietLineSeesStart(t *testing.T) {
	slots := filepath.Join(t.TempDir(), "slots")
	other, dir := project(t), project(t)
	holder, err := New(Config{MaxBuilds: 1, SlotDir: slots}).Wait(context.Background(), Request{Project: other, Name: "other"})
	if err != nil {
		t.Fatal(err)
	}
	ahead := queued(t, New(Config{MaxBuilds: 1, SlotDir: slots}), Request{Project: dir, Name: "ahead"})
	q := New(Config{MaxBuilds: 1, SlotDir: slots})
	statuses := make(chan Status, 64)
	behind := queued(t, q, Request{Project: dir, Name: "behind", Report: func(s Status) {
		select {
		case statuses <- s:
		default:
		}
	}})
	settle(t, q, dir, 1)
	holder.Release(nil)
	o := await(t, ahead)
	if o.err != nil {
		t.Fatal(o.err)
	}
	defer o.turn.Release(nil)
	deadline := time.After(10 * time.Second)
	for {
		select {
		case s := <-statuses:
			if len(s.Ahead) == 1 && s.Ahead[0].Name == "ahead" && s.Ahead[0].Running {
				o.turn.Release(nil)
				if b := await(t, behind); b.err != nil {
					t.Fatal(b.err)
				} else {
					b.turn.Release(nil)
				}
				return
			}
		case <-deadline:
			t.Fatal("the waiting build was not told within 10 s that the build ahead started")
		}
	}
}

// TestHeartbeatNotLateAfterBackoff: however far the checks of a quiet line
// backed off, a waiting build checks again no later than its next
// heartbeat is due, so its reports come every Heartbeat while nothing
// changes (docs/safe-build.md#5). Backing off alone (checks 1, 3, 7 and
// 15 s after the first report), a `build run` waiting behind one build
// gave its first heartbeat 17 s after its first report, and a host that
// resets a 15 s timeout on progress gave up.
func TestHeartbeatNotLateAfterBackoff(t *testing.T) {
	const hb = 10 * time.Second
	reported := time.Now()
	for _, live := range []int{2, 33, 200} {
		for quiet := range maxBackoff + 2 {
			for _, since := range []time.Duration{0, time.Second, 7 * time.Second, 9500 * time.Millisecond, hb, 12 * time.Second} {
				w := &waiter{req: Request{Heartbeat: hb, Report: func(Status) {}}, live: live, any: true, reported: reported}
				got := w.nextCheck(quiet, reported.Add(since))
				if due := max(hb-since, 0); got > due || got < 0 {
					t.Errorf("line of %d, %d quiet checks, %s after a report: next check in %s, want within the %s until the heartbeat is due", live, quiet, since, got, due)
				}
			}
		}
	}
	// Without a heartbeat or anyone to report to, the checks back off as
	// far as they do.
	w := &waiter{req: Request{}, live: 2, any: true, reported: reported}
	if got, want := w.nextCheck(maxBackoff, reported.Add(9*time.Second)), w.rescanEvery(maxBackoff); got != want {
		t.Errorf("without a heartbeat: next check in %s, want %s", got, want)
	}
}
