//go:build unix

package safebuild

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/buildguard/buildguard/harness/fakeagent"
	"github.com/buildguard/buildguard/internal/testsupport/wait"
	"github.com/buildguard/buildguard/service/buildqueue"
)

// queuedMessages collects a build's queue reports and signals each.
type queuedMessages struct {
	mu   sync.Mutex
	msgs []string
	in   chan string
}

func newQueued() *queuedMessages { return &queuedMessages{in: make(chan string, 64)} }

func (q *queuedMessages) report(m string) {
	q.mu.Lock()
	q.msgs = append(q.msgs, m)
	q.mu.Unlock()
	select {
	case q.in <- m:
	default:
	}
}

// await waits (10 s at most) for a report containing want.
func (q *queuedMessages) await(t *testing.T, want string) string {
	t.Helper()
	deadline := time.After(10 * time.Second)
	for {
		select {
		case m := <-q.in:
			if strings.Contains(m, want) {
				return m
			}
		case <-deadline:
			t.Fatalf("no queue report containing %q within 10s", want)
		}
	}
}

// startHang starts a build named slow that runs until ctx ends and waits
// until its command runs.
func startHang(t *testing.T, f *fixture, ctx context.Context) <-chan *Result {
	t.Helper()
	pidFile := filepath.Join(t.TempDir(), "pids")
	first := f.request(t, "hang", pidFile)
	first.Build.Name = "slow"
	done := make(chan *Result, 1)
	go func() { done <- f.builder.Run(ctx, first) }()
	wait.PIDFile(t, 10*time.Second, pidFile)
	return done
}

func countLogs(t *testing.T, dir string) int {
	t.Helper()
	entries, _ := os.ReadDir(LogDir(dir))
	return len(entries)
}

// TestRunSecondCallWaitsItsTurn: a second build of the project is never
// refused for the one running (docs/decisions.md#D18): it reports its place
// and the running build, runs nothing meanwhile, and runs once the first
// has ended.
func TestRunSecondCallWaitsItsTurn(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	first := startHang(t, f, ctx)
	marker := filepath.Join(t.TempDir(), "second")
	req := f.request(t, "compile", marker, "X=1")
	q := newQueued()
	req.Queued = q.report
	second := make(chan *Result, 1)
	go func() { second <- f.builder.Run(context.Background(), req) }()
	msg := q.await(t, "place 2")
	if !strings.Contains(msg, `"slow"`) || !strings.Contains(msg, "running for") {
		t.Errorf("queue report %q does not name the running build", msg)
	}
	if _, err := os.Stat(marker); err == nil {
		t.Fatal("the second build's command ran while the first ran")
	}
	cancel()
	if r := <-first; r.Outcome != OutcomeCancelled {
		t.Fatalf("first: %s: %s", r.Outcome, r.Detail)
	}
	res := <-second
	if res.Outcome != OutcomeOK || !strings.Contains(res.Detail, "for its turn in the project's build queue behind 1 build") {
		t.Fatalf("second: %s: %s", res.Outcome, res.Detail)
	}
	if _, err := os.Stat(marker); err != nil {
		t.Error("the second build's command did not run")
	}
}

// TestRunCancelWhileWaiting: a build cancelled in the queue ends at once,
// nothing of it ran and no hold was asked for.
func TestRunCancelWhileWaiting(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	first := startHang(t, f, ctx)
	marker := filepath.Join(t.TempDir(), "second")
	req := f.request(t, "compile", marker, "X=1")
	q := newQueued()
	req.Queued = q.report
	wctx, wcancel := context.WithCancel(context.Background())
	second := make(chan *Result, 1)
	go func() { second <- f.builder.Run(wctx, req) }()
	q.await(t, "place 2")
	wcancel()
	res := <-second
	if res.Outcome != OutcomeCancelled || res.ExitCode != nil || res.Owner != nil || res.Output.LogFile != nil ||
		!strings.Contains(res.Detail, "nothing ran and no hold was taken") {
		t.Fatalf("cancelled while waiting: %+v", res)
	}
	if n := strings.Count(strings.Join(f.agent.Commands(), "\n"), "BUILD started"); n != 1 {
		t.Errorf("the agent saw %d BUILD started, want only the first build's", n)
	}
	cancel()
	<-first
	if _, err := os.Stat(marker); err == nil {
		t.Error("the cancelled build's command ran")
	}
}

// TestRunQueuedTimeout: a build that waits longer than its queue timeout
// ends with outcome queued-timeout.
func TestRunQueuedTimeout(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	first := startHang(t, f, ctx)
	req := f.request(t, "compile", t.TempDir(), "X=1")
	req.Build.QueueTimeout = 200 * time.Millisecond
	res := f.builder.Run(context.Background(), req)
	if res.Outcome != OutcomeQueuedTimeout || !res.IsError() || res.ExitCode != nil || res.Owner != nil ||
		!strings.Contains(res.Detail, "queueTimeoutSeconds") || !strings.Contains(res.Detail, `"slow"`) {
		t.Fatalf("queue timeout: %+v", res)
	}
	cancel()
	<-first
}

// TestRunCoalescesIdenticalWaitingBuilds: ten identical calls arriving while
// another build runs are served by one build; all get the same result. The
// build that was already running is not joined.
func TestRunCoalescesIdenticalWaitingBuilds(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	first := startHang(t, f, ctx)
	out := t.TempDir()
	var results []chan *Result
	for i := range 10 {
		req := f.request(t, "compile", out, "X=1")
		q := newQueued()
		req.Queued = q.report
		c := make(chan *Result, 1)
		results = append(results, c)
		go func() { c <- f.builder.Run(context.Background(), req) }()
		if i == 0 {
			q.await(t, "place 2")
		} else {
			q.await(t, "joined the identical build")
		}
	}
	cancel()
	<-first
	var want []byte
	for i, c := range results {
		res := <-c
		if res.Outcome != OutcomeOK {
			t.Fatalf("caller %d: %s: %s", i, res.Outcome, res.Detail)
		}
		got, _ := res.JSON()
		if want == nil {
			want = got
		} else if string(got) != string(want) {
			t.Errorf("caller %d got a different result:\n%s\nwant\n%s", i, got, want)
		}
	}
	if n := countLogs(t, f.dir); n != 2 {
		t.Errorf("%d builds ran, want 2 (the running one and one for the ten callers)", n)
	}
}

// TestStopEndsWaitingBuilds: stopping the Builder cancels the running build
// and the waiting ones, and waits for all of them.
func TestStopEndsWaitingBuilds(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	first := startHang(t, f, context.Background())
	req := f.request(t, "compile", t.TempDir(), "X=1")
	q := newQueued()
	req.Queued = q.report
	second := make(chan *Result, 1)
	go func() { second <- f.builder.Run(context.Background(), req) }()
	q.await(t, "place 2")
	f.builder.Stop()
	// Stop returns once both have ended: the running build's BUILD failed
	// was already acknowledged.
	if !f.agent.Received("BUILD failed") {
		t.Fatal("Stop returned before the running build's BUILD failed")
	}
	for name, c := range map[string]<-chan *Result{"running": first, "waiting": second} {
		select {
		case r := <-c:
			if r.Outcome != OutcomeCancelled || (name == "waiting" && (!strings.Contains(r.Detail, "server is stopping") || r.Owner != nil)) {
				t.Errorf("%s build: %s: %s", name, r.Outcome, r.Detail)
			}
		case <-time.After(5 * time.Second):
			t.Fatalf("the %s build's Run did not return after Stop", name)
		}
	}
}

// TestRunIdenticalBuildsForAnotherAgentDoNotJoin: the same build of the
// project for another agent (another port) is not identical: it waits for
// a build of its own.
func TestRunIdenticalBuildsForAnotherAgentDoNotJoin(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	other := fakeagent.NewServer(t, fakeagent.WithHeartbeat(-1))
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	first := startHang(t, f, ctx)
	out := t.TempDir()
	var results []chan *Result
	for i, agent := range []*fakeagent.Server{f.agent, other} {
		req := f.request(t, "compile", out, "X=1")
		req.Endpoint.PortFile = agent.PortFile()
		q := newQueued()
		req.Queued = q.report
		c := make(chan *Result, 1)
		results = append(results, c)
		go func() { c <- f.builder.Run(context.Background(), req) }()
		msg := q.await(t, "place")
		if strings.Contains(msg, "joined") {
			t.Fatalf("build %d for another agent joined: %s", i, msg)
		}
	}
	cancel()
	<-first
	for _, c := range results {
		if res := <-c; res.Outcome != OutcomeOK {
			t.Fatalf("%s: %s", res.Outcome, res.Detail)
		}
	}
	if n := countLogs(t, f.dir); n != 3 {
		t.Errorf("%d builds ran, want 3", n)
	}
}

// TestRunOnlyTheSameBuildJoins: a call joins a waiting build only when
// both are the same build (docs/decisions.md#D22): a build of another
// directory of the project (a module's, queued at the project's root), with
// another environment, another owner, another time limit or another
// project gate waits for a build of its own and gets its own result, owner
// and log. The same call again joins.
func TestRunOnlyTheSameBuildJoins(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name string
		join bool
		// other makes the second call, after the first waits in the queue.
		other func(t *testing.T, f *fixture, req Request) (*Builder, Request)
	}{
		{"the same build", true, func(t *testing.T, f *fixture, req Request) (*Builder, Request) { return f.builder, req }},
		{"the project's directory while its module's waits", false, func(t *testing.T, f *fixture, req Request) (*Builder, Request) {
			req.Dir, req.Endpoint.Base = f.dir, f.dir
			return f.builder, req
		}},
		{"another environment", false, func(t *testing.T, f *fixture, req Request) (*Builder, Request) {
			return New(Config{Grace: 500 * time.Millisecond, Env: append(f.builder.env(), "JAVA_HOME=/elsewhere")}), req
		}},
		{"another owner", false, func(t *testing.T, f *fixture, req Request) (*Builder, Request) {
			if _, err := projectOwner(req.Dir); err != nil {
				t.Fatal(err)
			}
			path := filepath.Join(req.Dir, StateDir, OwnerFile)
			if err := os.Remove(path); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(path, []byte("another-owner\n"), 0o600); err != nil {
				t.Fatal(err)
			}
			return f.builder, req
		}},
		{"another time limit", false, func(t *testing.T, f *fixture, req Request) (*Builder, Request) {
			req.Timeout = 2 * time.Minute
			return f.builder, req
		}},
		{"another project gate", false, func(t *testing.T, f *fixture, req Request) (*Builder, Request) {
			req.Confirm = req.Dir
			return f.builder, req
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			f := newFixture(t)
			// The module's directory queues at the project's root.
			if err := os.WriteFile(filepath.Join(f.dir, ConfigFile), []byte(`{"builds": {"fake": {"command": ["x"]}}}`), 0o644); err != nil {
				t.Fatal(err)
			}
			module := filepath.Join(f.dir, "m")
			if err := os.Mkdir(module, 0o755); err != nil {
				t.Fatal(err)
			}
			// A turn of the project's queue held here keeps both calls
			// waiting, and leaves no hold at the agent for another owner.
			gate, err := f.builder.cfg.Queue.Wait(context.Background(), buildqueue.Request{Project: f.dir, Name: "gate"})
			if err != nil {
				t.Fatal(err)
			}
			defer gate.Release(nil)
			out := t.TempDir()
			req := f.request(t, "compile", out, "X=1")
			req.Dir, req.Endpoint.Base = module, module
			q := newQueued()
			req.Queued = q.report
			waiting := make(chan *Result, 1)
			go func() { waiting <- f.builder.Run(context.Background(), req) }()
			q.await(t, "place 2")
			b, other := c.other(t, f, req)
			oq := newQueued()
			other.Queued = oq.report
			second := make(chan *Result, 1)
			go func() { second <- b.Run(context.Background(), other) }()
			msg := oq.await(t, "")
			if joined := strings.Contains(msg, "joined"); joined != c.join {
				t.Fatalf("joined: %v, want %v: %s", joined, c.join, msg)
			}
			gate.Release(nil)
			w, o := <-waiting, <-second
			wj, _ := w.JSON()
			oj, _ := o.JSON()
			if w.Outcome != OutcomeOK {
				t.Fatalf("the first call: %s", wj)
			}
			if c.join {
				if string(wj) != string(oj) {
					t.Fatalf("the joined call got\n%s\nwant\n%s", oj, wj)
				}
				return
			}
			if string(oj) == string(wj) {
				t.Fatalf("the second call got the first's result: %s", oj)
			}
			if o.Outcome != OutcomeOK {
				return // refused on its own account (the project gate): it did not join
			}
			if o.Output.LogFile == nil || !strings.HasPrefix(*o.Output.LogFile, LogDir(other.Dir)+string(os.PathSeparator)) {
				t.Errorf("the second call's log is %v, want one in %s", o.Output.LogFile, LogDir(other.Dir))
			}
			if want, err := projectOwner(other.Dir); err != nil || o.Owner == nil || *o.Owner != want {
				t.Errorf("the second call's owner is %v, want its directory's %q (%v)", o.Owner, want, err)
			}
		})
	}
}
