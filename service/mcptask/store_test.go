package mcptask

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"

	"github.com/buildguard/buildguard/internal/testsupport/wait"
)

// clock is a settable clock for the store's TTLs.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func newClock() *clock { return &clock{t: time.Date(2026, 12, 2, 6, 0, 0, 0, time.UTC)} }

func (c *clock) now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *clock) add(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

func closeStore(t *testing.T, s *Store) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := s.Close(ctx); err != nil {
		t.Errorf("Close: %v", err)
	}
}

// finish waits (bounded) until the task's work returned and returns its state.
func finish(t *testing.T, s *Store, id string) DetailedTask {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := s.Wait(ctx, id); err != nil {
		t.Fatalf("waiting for task %s: %v", id, err)
	}
	d, err := s.Get(id)
	if err != nil {
		t.Fatalf("Get(%s) after it finished: %v", id, err)
	}
	return d
}

func result(v string) Work {
	return func(context.Context, *Run) (json.RawMessage, error) { return json.RawMessage(v), nil }
}

// blockUntilCancelled is work that runs until its context ends.
func blockUntilCancelled(started chan<- struct{}) Work {
	return func(ctx context.Context, r *Run) (json.RawMessage, error) {
		if started != nil {
			close(started)
		}
		<-ctx.Done()
		return nil, Cancelled("stopped: " + r.ID()[:4])
	}
}

func TestStartIsRetrievableAtOnceAndSeeded(t *testing.T) {
	c := newClock()
	s := NewStore(Config{Now: c.now})
	defer closeStore(t, s)
	release := make(chan struct{})
	seed, err := s.Start("queued behind nothing", func(ctx context.Context, r *Run) (json.RawMessage, error) {
		<-release
		return json.RawMessage(`{"content":[],"isError":false}`), nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if seed.Status != StatusWorking || seed.StatusMessage != "queued behind nothing" {
		t.Errorf("seed = %+v, want working with the start message", seed)
	}
	if seed.CreatedAt != "2026-12-02T06:00:00.000Z" || seed.LastUpdatedAt != seed.CreatedAt {
		t.Errorf("timestamps = %s / %s", seed.CreatedAt, seed.LastUpdatedAt)
	}
	if seed.TTLMs == nil || *seed.TTLMs != DefaultKeep.Milliseconds() || seed.PollIntervalMs != DefaultPollInterval.Milliseconds() {
		t.Errorf("ttlMs/pollIntervalMs = %v/%d", seed.TTLMs, seed.PollIntervalMs)
	}
	d, err := s.Get(seed.TaskID)
	if err != nil {
		t.Fatalf("Get right after Start: %v", err)
	}
	if d.Status != StatusWorking || d.Result != nil || d.Error != nil {
		t.Errorf("running task = %+v", d)
	}
	close(release)
	d = finish(t, s, seed.TaskID)
	if d.Status != StatusCompleted || string(d.Result) != `{"content":[],"isError":false}` || d.StatusMessage != "" {
		t.Errorf("finished task = %+v", d)
	}
}

func TestIDsAreRandomAndLong(t *testing.T) {
	s := NewStore(Config{})
	defer closeStore(t, s)
	seen := map[string]bool{}
	for range 200 {
		task, err := s.Start("", result(`{}`))
		if err != nil {
			t.Fatal(err)
		}
		raw, err := base64.RawURLEncoding.DecodeString(task.TaskID)
		if err != nil || len(raw)*8 < 128 {
			t.Fatalf("id %q: %d random bits (%v), want at least 128", task.TaskID, len(raw)*8, err)
		}
		if seen[task.TaskID] {
			t.Fatalf("id %q issued twice", task.TaskID)
		}
		seen[task.TaskID] = true
	}
	// A store whose random source fails creates nothing.
	bad := NewStore(Config{Rand: bytes.NewReader(nil)})
	defer closeStore(t, bad)
	if _, err := bad.Start("", result(`{}`)); err == nil || bad.Len() != 0 {
		t.Errorf("Start with a failing random source: err=%v, %d tasks", err, bad.Len())
	}
}

func TestOutcomes(t *testing.T) {
	s := NewStore(Config{})
	defer closeStore(t, s)
	cases := []struct {
		name      string
		work      Work
		status    Status
		code      int64
		msg       string
		hasResult bool
	}{
		{"tool error result is completed", result(`{"content":[{"type":"text","text":"no"}],"isError":true}`), StatusCompleted, 0, "", true},
		{"JSON-RPC error is failed with it", func(context.Context, *Run) (json.RawMessage, error) {
			return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: "bad argument"}
		}, StatusFailed, jsonrpc.CodeInvalidParams, "bad argument", false},
		{"Go error is failed with -32603", func(context.Context, *Run) (json.RawMessage, error) {
			return nil, errors.New("broken invariant")
		}, StatusFailed, jsonrpc.CodeInternalError, "broken invariant", false},
		{"panic is failed with -32603", func(context.Context, *Run) (json.RawMessage, error) {
			panic("boom")
		}, StatusFailed, jsonrpc.CodeInternalError, "panic in task work: boom", false},
		{"nothing returned is failed", func(context.Context, *Run) (json.RawMessage, error) {
			return nil, nil
		}, StatusFailed, jsonrpc.CodeInternalError, "the work returned neither a result nor an error", false},
		{"context.Canceled without a cancellation is failed", func(context.Context, *Run) (json.RawMessage, error) {
			return nil, context.Canceled
		}, StatusFailed, jsonrpc.CodeInternalError, "context canceled", false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			task, err := s.Start("", tc.work)
			if err != nil {
				t.Fatal(err)
			}
			d := finish(t, s, task.TaskID)
			if d.Status != tc.status || d.ErrorCode() != tc.code || (d.Result != nil) != tc.hasResult || d.StatusMessage != tc.msg {
				t.Errorf("got status %s code %d result %s message %q; want %s %d result=%v %q", d.Status, d.ErrorCode(), d.Result, d.StatusMessage, tc.status, tc.code, tc.hasResult, tc.msg)
			}
			if d.Status == StatusFailed && d.Result != nil {
				t.Errorf("failed task carries a result")
			}
		})
	}
}

func TestReportSetsStatusMessage(t *testing.T) {
	c := newClock()
	s := NewStore(Config{Now: c.now})
	defer closeStore(t, s)
	reported, release := make(chan struct{}), make(chan struct{})
	task, err := s.Start("", func(ctx context.Context, r *Run) (json.RawMessage, error) {
		c.add(time.Second)
		r.Report("> Task :b:compileJava")
		close(reported)
		<-release
		r.Report("late")
		return json.RawMessage(`{}`), nil
	})
	if err != nil {
		t.Fatal(err)
	}
	<-reported
	d, _ := s.Get(task.TaskID)
	if d.StatusMessage != "> Task :b:compileJava" || d.LastUpdatedAt != "2026-12-02T06:00:01.000Z" {
		t.Errorf("after Report: message %q, lastUpdatedAt %s", d.StatusMessage, d.LastUpdatedAt)
	}
	close(release)
	if d := finish(t, s, task.TaskID); d.StatusMessage != "" || d.Status != StatusCompleted {
		t.Errorf("completed task: %+v", d)
	}
}

func TestCancel(t *testing.T) {
	s := NewStore(Config{})
	defer closeStore(t, s)
	started := make(chan struct{})
	task, err := s.Start("", blockUntilCancelled(started))
	if err != nil {
		t.Fatal(err)
	}
	<-started
	for range 2 { // idempotent
		if err := s.Cancel(task.TaskID); err != nil {
			t.Fatalf("Cancel: %v", err)
		}
	}
	d := finish(t, s, task.TaskID)
	if d.Status != StatusCancelled || d.StatusMessage != "stopped: "+task.TaskID[:4] || d.Result != nil || d.Error != nil {
		t.Errorf("cancelled task = %+v", d)
	}
	if err := s.Cancel(task.TaskID); err != nil {
		t.Errorf("Cancel of a cancelled task: %v", err)
	}
	if err := s.Cancel("no-such-task"); !errors.Is(err, ErrUnknownTask) {
		t.Errorf("Cancel(unknown) = %v, want ErrUnknownTask", err)
	}

	// A finished task stays what it was.
	done, _ := s.Start("", result(`{"ok":true}`))
	finish(t, s, done.TaskID)
	if err := s.Cancel(done.TaskID); err != nil {
		t.Fatal(err)
	}
	if d, _ := s.Get(done.TaskID); d.Status != StatusCompleted {
		t.Errorf("Cancel changed a completed task to %s", d.Status)
	}

	// Work that finishes despite the cancellation completes: it finished first.
	finishing, _ := s.Start("", func(ctx context.Context, r *Run) (json.RawMessage, error) {
		<-ctx.Done()
		return json.RawMessage(`{"outcome":"ok"}`), nil
	})
	_ = s.Cancel(finishing.TaskID)
	if d := finish(t, s, finishing.TaskID); d.Status != StatusCompleted {
		t.Errorf("work that returned a result after cancel: %s", d.Status)
	}
}

func TestCancellingIsVisibleWhileTheWorkStops(t *testing.T) {
	s := NewStore(Config{})
	defer closeStore(t, s)
	stopping, release := make(chan struct{}), make(chan struct{})
	task, _ := s.Start("building", func(ctx context.Context, r *Run) (json.RawMessage, error) {
		<-ctx.Done()
		close(stopping)
		<-release // the group is being terminated, BUILD failed awaited
		return nil, Cancelled("build stopped; BUILD failed acknowledged")
	})
	_ = s.Cancel(task.TaskID)
	<-stopping
	d, _ := s.Get(task.TaskID)
	if d.Status != StatusWorking || d.StatusMessage != "cancelling: building" {
		t.Errorf("while stopping: %s %q, want working, cancelling: building", d.Status, d.StatusMessage)
	}
	close(release)
	if d := finish(t, s, task.TaskID); d.Status != StatusCancelled || d.StatusMessage != "build stopped; BUILD failed acknowledged" {
		t.Errorf("after stop: %+v", d)
	}
}

func TestFinishedTaskKeptForKeepThenGone(t *testing.T) {
	c := newClock()
	s := NewStore(Config{Now: c.now, Keep: time.Minute}) // raised to MinKeep
	defer closeStore(t, s)
	release := make(chan struct{})
	task, _ := s.Start("", func(context.Context, *Run) (json.RawMessage, error) {
		<-release
		return json.RawMessage(`{}`), nil
	})
	c.add(3 * time.Minute) // the work ran three minutes
	close(release)
	d := finish(t, s, task.TaskID)
	want := (3*time.Minute + MinKeep).Milliseconds()
	if *d.TTLMs != want {
		t.Errorf("ttlMs of the finished task = %d, want %d (creation to finish plus %s)", *d.TTLMs, want, MinKeep)
	}
	c.add(MinKeep)
	if _, err := s.Get(task.TaskID); err != nil {
		t.Fatalf("Get at the end of its keep time: %v", err)
	}
	c.add(time.Millisecond)
	if _, err := s.Get(task.TaskID); !errors.Is(err, ErrUnknownTask) {
		t.Errorf("Get after its keep time = %v, want ErrUnknownTask", err)
	}
	if s.Len() != 0 {
		t.Errorf("%d tasks held after expiry", s.Len())
	}
}

func TestRunningTaskNeverExpires(t *testing.T) {
	c := newClock()
	s := NewStore(Config{Now: c.now})
	defer closeStore(t, s)
	task, _ := s.Start("", blockUntilCancelled(nil))
	c.add(48 * time.Hour)
	d, err := s.Get(task.TaskID)
	if err != nil || d.Status != StatusWorking {
		t.Fatalf("running task after 48 h: %v %v", d.Status, err)
	}
	if *d.TTLMs <= (48 * time.Hour).Milliseconds() {
		t.Errorf("ttlMs of a running task (%d) must outgrow its age", *d.TTLMs)
	}
}

func TestStoreIsBounded(t *testing.T) {
	c := newClock()
	s := NewStore(Config{Now: c.now, MaxTasks: 3})
	defer closeStore(t, s)
	running, _ := s.Start("", blockUntilCancelled(nil))
	var finished []string
	for i := range 2 {
		c.add(time.Second)
		task, err := s.Start("", result(fmt.Sprintf(`{"n":%d}`, i)))
		if err != nil {
			t.Fatal(err)
		}
		finish(t, s, task.TaskID)
		finished = append(finished, task.TaskID)
	}
	// Full: the next one evicts the task that finished first.
	c.add(time.Second)
	next, err := s.Start("", blockUntilCancelled(nil))
	if err != nil {
		t.Fatalf("Start in a full store with finished tasks: %v", err)
	}
	if _, err := s.Get(finished[0]); !errors.Is(err, ErrUnknownTask) {
		t.Errorf("oldest finished task still held: %v", err)
	}
	if _, err := s.Get(finished[1]); err != nil {
		t.Errorf("newer finished task evicted: %v", err)
	}
	c.add(time.Second)
	third, err := s.Start("", blockUntilCancelled(nil))
	if err != nil {
		t.Fatal(err)
	}
	// Now three running tasks: nothing may be evicted.
	if _, err := s.Start("", result(`{}`)); !errors.Is(err, ErrFull) {
		t.Errorf("Start with every task running = %v, want ErrFull", err)
	}
	for _, id := range []string{running.TaskID, next.TaskID, third.TaskID} {
		if d, err := s.Get(id); err != nil || d.Status != StatusWorking {
			t.Errorf("running task %s: %v %v", id, d.Status, err)
		}
	}
}

func TestThousandsOfTasksStayBounded(t *testing.T) {
	s := NewStore(Config{MaxTasks: 64})
	defer closeStore(t, s)
	var ms runtime.MemStats
	for i := range 5000 {
		task, err := s.Start("", result(`{"content":[{"type":"text","text":"`+fmt.Sprint(i)+`"}]}`))
		if err != nil {
			t.Fatalf("task %d: %v", i, err)
		}
		finish(t, s, task.TaskID)
	}
	if n := s.Len(); n > 64 {
		t.Errorf("%d tasks held, bound is 64", n)
	}
	runtime.ReadMemStats(&ms)
	t.Logf("heap in use after 5000 tasks: %d KiB", ms.HeapInuse/1024)
}

func TestCloseCancelsRunningWork(t *testing.T) {
	s := NewStore(Config{})
	started := make(chan struct{})
	task, _ := s.Start("", blockUntilCancelled(started))
	done, _ := s.Start("", result(`{}`))
	finish(t, s, done.TaskID)
	<-started
	closeStore(t, s)
	d, err := s.Get(task.TaskID)
	if err != nil || d.Status != StatusCancelled {
		t.Errorf("running task after Close: %v %v", d.Status, err)
	}
	if d, _ := s.Get(done.TaskID); d.Status != StatusCompleted {
		t.Errorf("finished task after Close: %s", d.Status)
	}
	if _, err := s.Start("", result(`{}`)); !errors.Is(err, ErrClosed) {
		t.Errorf("Start after Close = %v, want ErrClosed", err)
	}
}

func TestCloseIsBounded(t *testing.T) {
	s := NewStore(Config{})
	release := make(chan struct{})
	defer close(release)
	_, _ = s.Start("", func(context.Context, *Run) (json.RawMessage, error) {
		<-release // ignores its cancellation
		return nil, nil
	})
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	if err := s.Close(ctx); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("Close with work that ignores cancellation = %v, want the deadline", err)
	}
}

func TestInputRequired(t *testing.T) {
	s := NewStore(Config{})
	defer closeStore(t, s)
	reqs := map[string]json.RawMessage{
		"a": json.RawMessage(`{"method":"elicitation/create","params":{"message":"first?"}}`),
		"b": json.RawMessage(`{"method":"elicitation/create","params":{"message":"second?"}}`),
	}
	parked := make(chan struct{})
	task, _ := s.Start("", func(ctx context.Context, r *Run) (json.RawMessage, error) {
		close(parked)
		answers, err := r.Input(reqs)
		if err != nil {
			return nil, err
		}
		return json.Marshal(map[string]any{"a": answers["a"], "b": answers["b"]})
	})
	<-parked
	var d DetailedTask
	// The work parks right after the signal; Get is the only way to see it.
	wait.For(t, 10*time.Second, "input_required", func() bool {
		d, _ = s.Get(task.TaskID)
		return d.Status == StatusInputRequired
	})
	if len(d.InputRequests) != 2 {
		t.Fatalf("inputRequests = %v", d.InputRequests)
	}
	if err := s.Update(task.TaskID, map[string]json.RawMessage{"a": json.RawMessage(`{"action":"accept"}`), "zzz": json.RawMessage(`1`)}); err != nil {
		t.Fatal(err)
	}
	d, _ = s.Get(task.TaskID)
	if d.Status != StatusInputRequired || len(d.InputRequests) != 1 || d.InputRequests["b"] == nil {
		t.Fatalf("after a partial update: %s %v", d.Status, d.InputRequests)
	}
	if err := s.Update(task.TaskID, map[string]json.RawMessage{"b": json.RawMessage(`{"action":"decline"}`)}); err != nil {
		t.Fatal(err)
	}
	d = finish(t, s, task.TaskID)
	if d.Status != StatusCompleted || string(d.Result) != `{"a":{"action":"accept"},"b":{"action":"decline"}}` {
		t.Errorf("after the last answer: %s %s", d.Status, d.Result)
	}
	if err := s.Update("nope", nil); !errors.Is(err, ErrUnknownTask) {
		t.Errorf("Update(unknown) = %v", err)
	}
}

func TestCancelWhileWaitingForInput(t *testing.T) {
	s := NewStore(Config{})
	defer closeStore(t, s)
	task, _ := s.Start("", func(ctx context.Context, r *Run) (json.RawMessage, error) {
		_, err := r.Input(map[string]json.RawMessage{"k": json.RawMessage(`{}`)})
		return nil, err
	})
	_ = s.Cancel(task.TaskID)
	if d := finish(t, s, task.TaskID); d.Status != StatusCancelled || d.InputRequests != nil {
		t.Errorf("cancelled while waiting for input: %+v", d)
	}
}

func TestConcurrentUse(t *testing.T) {
	s := NewStore(Config{MaxTasks: 32})
	defer closeStore(t, s)
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			for range 50 {
				task, err := s.Start("", func(ctx context.Context, r *Run) (json.RawMessage, error) {
					r.Report("line")
					return json.RawMessage(`{}`), nil
				})
				if errors.Is(err, ErrFull) {
					continue
				}
				if err != nil {
					t.Error(err)
					return
				}
				_, _ = s.Get(task.TaskID)
				_ = s.Cancel(task.TaskID)
			}
		})
	}
	wg.Wait()
}
