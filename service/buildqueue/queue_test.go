package buildqueue

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// project returns a fresh project directory.
func project(t testing.TB) string {
	t.Helper()
	dir, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	return dir
}

func newQueue() *Queue { return New(Config{MaxBuilds: -1}) }

// queued starts a Wait in the background and returns once it has reported
// its first status (it is in the line), with a channel for its outcome.
type outcome struct {
	turn *Turn
	err  error
	at   time.Time
}

func queued(t *testing.T, q *Queue, req Request) <-chan outcome {
	t.Helper()
	in := make(chan Status, 1)
	report := req.Report
	req.Report = func(s Status) {
		select {
		case in <- s:
		default:
		}
		if report != nil {
			report(s)
		}
	}
	done := make(chan outcome, 1)
	go func() {
		turn, err := q.Wait(context.Background(), req)
		done <- outcome{turn, err, time.Now()}
	}()
	select {
	case <-in:
	case o := <-done:
		t.Fatalf("Wait returned before queueing: %v", o.err)
	case <-time.After(10 * time.Second):
		t.Fatal("Wait did not report within 10s")
	}
	return done
}

func await(t *testing.T, c <-chan outcome) outcome {
	t.Helper()
	select {
	case o := <-c:
		return o
	case <-time.After(10 * time.Second):
		t.Fatal("Wait did not return within 10s")
	}
	return outcome{}
}

func tickets(t *testing.T, dir string) []string {
	t.Helper()
	entries, err := os.ReadDir(filepath.Join(dir, StateDir, QueueDir))
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), "t-") || strings.HasPrefix(e.Name(), "r-") {
			out = append(out, e.Name())
		}
	}
	return out
}

// TestFIFOOneAtATime: builds run one at a time, in the order they arrived,
// each told its place.
func TestFIFOOneAtATime(t *testing.T) {
	dir := project(t)
	q := newQueue()
	first, err := q.Wait(context.Background(), Request{Project: dir, Name: "b0"})
	if err != nil {
		t.Fatal(err)
	}
	var waits []<-chan outcome
	for i := 1; i <= 5; i++ {
		name := "b" + string(rune('0'+i))
		places := make(chan int, 1)
		waits = append(waits, queued(t, q, Request{Project: dir, Name: name, Report: func(s Status) {
			select {
			case places <- s.Place:
			default:
			}
		}}))
		if p := <-places; p != i+1 {
			t.Fatalf("%s reported place %d, want %d", name, p, i+1)
		}
	}
	first.Release(nil)
	for i, c := range waits {
		o := await(t, c)
		if o.err != nil {
			t.Fatal(o.err)
		}
		if o.turn.Ahead() != i+1 {
			t.Errorf("build %d: Ahead() = %d, want %d", i+1, o.turn.Ahead(), i+1)
		}
		// The next one must still be waiting: nothing else was released.
		if i+1 < len(waits) {
			select {
			case o2 := <-waits[i+1]:
				t.Fatalf("build %d was admitted while build %d ran (err %v)", i+2, i+1, o2.err)
			case <-time.After(20 * time.Millisecond):
			}
		}
		o.turn.Release(nil)
	}
	if got := tickets(t, dir); len(got) != 0 {
		t.Errorf("tickets left behind: %v", got)
	}
}

// TestStatusNamesWhatRunsAhead: a waiting build is told the running build's
// name, pid and how long it has run, and never an owner token.
func TestStatusNamesWhatRunsAhead(t *testing.T) {
	dir := project(t)
	q := newQueue()
	first, err := q.Wait(context.Background(), Request{Project: dir, Name: "classes", Front: "MCP"})
	if err != nil {
		t.Fatal(err)
	}
	defer first.Release(nil)
	got := make(chan Status, 1)
	ctx, cancel := context.WithCancel(context.Background())
	waited := make(chan struct{})
	go func() {
		defer close(waited)
		// Later reports are dropped: the test reads the first one only.
		turn, err := q.Wait(ctx, Request{Project: dir, Name: "full", Report: func(s Status) {
			select {
			case got <- s:
			default:
			}
		}})
		if err == nil {
			turn.Release(nil)
		}
	}()
	// The waiting build leaves the line before the test's directory goes.
	defer func() {
		cancel()
		select {
		case <-waited:
		case <-time.After(10 * time.Second):
			t.Error("the cancelled waiting build did not leave the line within 10 s")
		}
	}()
	var s Status
	select {
	case s = <-got:
	case <-time.After(10 * time.Second):
		t.Fatal("the waiting build reported no place within 10 s")
	}
	if s.Place != 2 || len(s.Ahead) != 1 || s.Ahead[0].Name != "classes" || s.Ahead[0].PID != os.Getpid() || !s.Ahead[0].Running {
		t.Fatalf("status %+v", s)
	}
	want := `waiting in the project's build queue at place 2; ahead: "classes" (pid ` + strconv.Itoa(os.Getpid()) + `, MCP) running for 0s; waited 0s`
	if s.String() != want {
		t.Errorf("status text\n got %s\nwant %s", s, want)
	}
}

// TestCancelWhileWaiting: a cancelled wait leaves the line at once, and the
// builds behind it move up.
func TestCancelWhileWaiting(t *testing.T) {
	dir := project(t)
	q := newQueue()
	first, err := q.Wait(context.Background(), Request{Project: dir, Name: "a"})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	reported := make(chan struct{}, 1)
	cancelled := make(chan error, 1)
	go func() {
		_, err := q.Wait(ctx, Request{Project: dir, Name: "b", Report: func(Status) {
			select {
			case reported <- struct{}{}:
			default:
			}
		}})
		cancelled <- err
	}()
	<-reported
	third := queued(t, q, Request{Project: dir, Name: "c"})
	cancel()
	if err := <-cancelled; !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled Wait returned %v", err)
	}
	if got := tickets(t, dir); len(got) != 2 {
		t.Fatalf("tickets after the cancel: %v (want the running and the third)", got)
	}
	first.Release(nil)
	o := await(t, third)
	if o.err != nil {
		t.Fatal(o.err)
	}
	o.turn.Release(nil)
}

// TestQueueTimeout: a wait that runs out of time says so and where it stood.
func TestQueueTimeout(t *testing.T) {
	dir := project(t)
	q := newQueue()
	first, err := q.Wait(context.Background(), Request{Project: dir, Name: "long"})
	if err != nil {
		t.Fatal(err)
	}
	defer first.Release(nil)
	_, err = q.Wait(context.Background(), Request{Project: dir, Name: "short", Timeout: 100 * time.Millisecond})
	var te *TimeoutError
	if !errors.As(err, &te) || !errors.Is(err, ErrTimeout) {
		t.Fatalf("Wait returned %v, want a TimeoutError", err)
	}
	if te.Last.Place != 2 || !strings.Contains(err.Error(), `"long"`) {
		t.Errorf("timeout error %q does not say what ran ahead", err)
	}
	if got := tickets(t, dir); len(got) != 1 {
		t.Errorf("tickets after the timeout: %v", got)
	}
}

// TestCoalesce: ten identical builds arriving while one waits join it; one
// runs, all get its result.
func TestCoalesce(t *testing.T) {
	dir := project(t)
	q := newQueue()
	running, err := q.Wait(context.Background(), Request{Project: dir, Name: "classes", Key: "k"})
	if err != nil {
		t.Fatal(err)
	}
	leader := queued(t, q, Request{Project: dir, Name: "classes", Key: "k"})
	var joiners []<-chan outcome
	for range 9 {
		joined := make(chan bool, 1)
		joiners = append(joiners, queued(t, q, Request{Project: dir, Name: "classes", Key: "k", Report: func(s Status) {
			select {
			case joined <- s.Joined != nil:
			default:
			}
		}}))
		if !<-joined {
			t.Fatal("an identical build arriving while one waits did not join it")
		}
	}
	// The running one is never joined: the first waiter did not join it.
	running.Release([]byte(`not for the waiting ones`))
	o := await(t, leader)
	if o.err != nil {
		t.Fatal(o.err)
	}
	if _, joined := o.turn.Joined(); joined {
		t.Fatal("the first waiting build joined the running one")
	}
	o.turn.Release([]byte(`{"outcome":"ok"}`))
	for _, c := range joiners {
		j := await(t, c)
		if j.err != nil {
			t.Fatal(j.err)
		}
		res, ok := j.turn.Joined()
		if !ok || string(res) != `{"outcome":"ok"}` {
			t.Fatalf("joined build got %q, %v", res, ok)
		}
	}
	if got := tickets(t, dir); len(got) != 0 {
		t.Errorf("files left behind: %v", got)
	}
}

// TestJoinedFallBackWithoutResult: when the leader ends without a result
// (cancelled for its own caller), its joined builds take their own places,
// in order, and run.
func TestJoinedFallBackWithoutResult(t *testing.T) {
	dir := project(t)
	q := newQueue()
	running, err := q.Wait(context.Background(), Request{Project: dir, Name: "x"})
	if err != nil {
		t.Fatal(err)
	}
	leader := queued(t, q, Request{Project: dir, Name: "classes", Key: "k"})
	j1 := queued(t, q, Request{Project: dir, Name: "classes", Key: "k"})
	running.Release(nil)
	o := await(t, leader)
	o.turn.Release(nil)
	o1 := await(t, j1)
	if o1.err != nil {
		t.Fatal(o1.err)
	}
	if _, joined := o1.turn.Joined(); joined {
		t.Fatal("a joined build took a result its leader did not leave")
	}
	o1.turn.Release(nil)
}

// TestSymlinkedStateDirRefused: nothing of the queue is followed through a
// symlink, and nothing is created at the link's target.
func TestSymlinkedStateDirRefused(t *testing.T) {
	for _, which := range []string{StateDir, filepath.Join(StateDir, QueueDir)} {
		t.Run(which, func(t *testing.T) {
			dir, elsewhere := project(t), t.TempDir()
			if which != StateDir {
				os.Mkdir(filepath.Join(dir, StateDir), 0o755)
			}
			if err := os.Symlink(elsewhere, filepath.Join(dir, which)); err != nil {
				t.Fatal(err)
			}
			_, err := newQueue().Wait(context.Background(), Request{Project: dir, Name: "x"})
			if !errors.Is(err, ErrUnusable) || !strings.Contains(err.Error(), "symlink") {
				t.Fatalf("Wait returned %v", err)
			}
			if entries, _ := os.ReadDir(elsewhere); len(entries) != 0 {
				t.Errorf("files created through the symlink: %v", entries)
			}
		})
	}
}

// TestTicketThatIsASymlinkIsNotFollowed: a hostile t-N symlink in the
// queue is neither followed nor removed.
func TestHostileEntriesLeftAlone(t *testing.T) {
	dir := project(t)
	qd := filepath.Join(dir, StateDir, QueueDir)
	if err := os.MkdirAll(qd, 0o700); err != nil {
		t.Fatal(err)
	}
	target := filepath.Join(t.TempDir(), "precious")
	os.WriteFile(target, []byte("keep"), 0o644)
	os.Symlink(target, filepath.Join(qd, "t-1"))
	os.WriteFile(filepath.Join(qd, "notes.txt"), []byte("mine"), 0o644)
	turn, err := newQueue().Wait(context.Background(), Request{Project: dir, Name: "x"})
	if err != nil {
		t.Fatal(err)
	}
	turn.Release(nil)
	if data, err := os.ReadFile(target); err != nil || string(data) != "keep" {
		t.Errorf("the symlink's target changed: %q %v", data, err)
	}
	if _, err := os.Lstat(filepath.Join(qd, "notes.txt")); err != nil {
		t.Errorf("a file that is not the queue's was removed: %v", err)
	}
}

// TestMaxBuildsAcrossProjects: with a cap of one build per user, a build of
// another project waits for the slot and says so.
func TestMaxBuildsAcrossProjects(t *testing.T) {
	slots := filepath.Join(t.TempDir(), "slots")
	q := New(Config{MaxBuilds: 1, SlotDir: slots})
	a, b := project(t), project(t)
	first, err := q.Wait(context.Background(), Request{Project: a, Name: "a"})
	if err != nil {
		t.Fatal(err)
	}
	statuses := make(chan Status, 4)
	second := queued(t, q, Request{Project: b, Name: "b", Report: func(s Status) { statuses <- s }})
	s := <-statuses
	if s.Slots != 1 || len(s.Ahead) != 1 || s.Ahead[0].Name != "a" || !strings.Contains(s.String(), "BUILDGUARD_MAX_BUILDS") {
		t.Fatalf("status %+v: %s", s, s)
	}
	select {
	case <-second:
		t.Fatal("a second build ran beyond the cap")
	case <-time.After(50 * time.Millisecond):
	}
	first.Release(nil)
	o := await(t, second)
	if o.err != nil {
		t.Fatal(o.err)
	}
	o.turn.Release(nil)
}

func TestMaxBuildsEnvInvalid(t *testing.T) {
	for _, v := range []string{"0", "-2", "two", "1.5"} {
		t.Setenv(MaxBuildsEnv, v)
		_, err := New(Config{}).Wait(context.Background(), Request{Project: project(t), Name: "x"})
		if !errors.Is(err, ErrUnusable) || !strings.Contains(err.Error(), MaxBuildsEnv) {
			t.Errorf("%s=%s: Wait returned %v", MaxBuildsEnv, v, err)
		}
	}
}

// TestNestedTurnAdmittedAtOnce: a build queued from inside the command of
// the running build (TurnEnv) does not wait behind it; a stale TurnEnv is
// ignored.
func TestNestedTurnAdmittedAtOnce(t *testing.T) {
	dir := project(t)
	q := newQueue()
	outer, err := q.Wait(context.Background(), Request{Project: dir, Name: "outer"})
	if err != nil {
		t.Fatal(err)
	}
	env := outer.Env()
	if len(env) != 1 {
		t.Fatalf("Env() = %v", env)
	}
	t.Setenv(TurnEnv, strings.TrimPrefix(env[0], TurnEnv+"="))
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	inner, err := q.Wait(ctx, Request{Project: dir, Name: "inner"})
	if err != nil {
		t.Fatalf("nested Wait: %v", err)
	}
	inner.Release(nil)
	outer.Release(nil)
	// Stale: the outer turn is gone, so the variable admits nothing.
	blocker, err := q.Wait(context.Background(), Request{Project: dir, Name: "blocker"})
	if err != nil {
		t.Fatal(err)
	}
	defer blocker.Release(nil)
	_, err = q.Wait(context.Background(), Request{Project: dir, Name: "late", Timeout: 50 * time.Millisecond})
	if !errors.Is(err, ErrTimeout) {
		t.Fatalf("a stale %s admitted a build: %v", TurnEnv, err)
	}
}

// TestNestedTurnNeedsItsSecret: only the value the running build handed
// its command admits a nested build; a nested build hands the same value
// on. Nothing any process of the user can read from disk admits one: not
// the ticket's path alone (numbers start again when the queue's directory
// was removed), not its path and arrival, not the hash the ticket holds,
// and no ticket file holds the secret. A value kept from an earlier build
// whose number came round again admits nothing either.
func TestNestedTurnNeedsItsSecret(t *testing.T) {
	dir := project(t)
	q := newQueue()
	first, err := q.Wait(context.Background(), Request{Project: dir, Name: "first"})
	if err != nil {
		t.Fatal(err)
	}
	stale := strings.TrimPrefix(first.Env()[0], TurnEnv+"=")
	first.Release(nil)
	if err := os.RemoveAll(filepath.Join(dir, StateDir)); err != nil {
		t.Fatal(err)
	}
	running, err := q.Wait(context.Background(), Request{Project: dir, Name: "running"})
	if err != nil {
		t.Fatal(err)
	}
	defer running.Release(nil)
	now := strings.TrimPrefix(running.Env()[0], TurnEnv+"=")
	path, secret, ok := splitTurn(now)
	if stalePath, _, _ := splitTurn(stale); !ok || path != stalePath {
		t.Fatalf("the test needs the number reused: %q then %q", stale, now)
	}
	onDisk, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(onDisk), secret) {
		t.Fatalf("the ticket holds the turn's secret: %s", onDisk)
	}
	var m meta
	if err := json.Unmarshal(onDisk, &m); err != nil || m.Proof == "" {
		t.Fatalf("the ticket %s: %v", onDisk, err)
	}
	admitted := func(value string) bool {
		t.Helper()
		t.Setenv(TurnEnv, value)
		turn, err := q.Wait(context.Background(), Request{Project: dir, Name: "inner", Timeout: 50 * time.Millisecond})
		if err != nil {
			if !errors.Is(err, ErrTimeout) {
				t.Fatalf("%s=%q: Wait returned %v", TurnEnv, value, err)
			}
			return false
		}
		defer turn.Release(nil)
		if got := turn.Env(); len(got) != 1 || got[0] != TurnEnv+"="+value {
			t.Errorf("%s=%q: the nested build hands on %v", TurnEnv, value, got)
		}
		return true
	}
	for _, c := range []struct {
		what, value string
		want        bool
	}{
		{"the running build's", now, true},
		{"kept from an earlier build of the same number", stale, false},
		{"the path alone", path, false},
		{"the path and its arrival", path + "@" + strconv.FormatInt(m.Since, 10), false},
		{"the path and the hash on disk", path + "#" + m.Proof, false},
		{"the path and a guess", path + "#" + strings.Repeat("0", secretLen), false},
		{"a secret cut short", path + "#" + secret[1:], false},
		{"no path", "#" + secret, false},
	} {
		if got := admitted(c.value); got != c.want {
			t.Errorf("%s (%q) admitted: %v, want %v", c.what, c.value, got, c.want)
		}
	}
}

// TestSlowReportHoldsNobody: a waiting build whose report is slow to be
// taken (a client that does not read its progress) does not hold up the
// builds of the project: the running one releases, the next one starts.
func TestSlowReportHoldsNobody(t *testing.T) {
	dir := project(t)
	q := newQueue()
	first, err := q.Wait(context.Background(), Request{Project: dir, Name: "first"})
	if err != nil {
		t.Fatal(err)
	}
	stuck, unstick := make(chan struct{}), make(chan struct{})
	var once sync.Once
	ctx, cancel := context.WithCancel(context.Background())
	ended := make(chan struct{})
	// The slow reader's Wait ends, and its ticket is gone, before the
	// project's directory is removed.
	t.Cleanup(func() {
		cancel()
		close(unstick)
		select {
		case <-ended:
		case <-time.After(10 * time.Second):
			t.Error("the slow reader's Wait did not end within 10s of its cancellation")
		}
	})
	go func() {
		defer close(ended)
		turn, err := q.Wait(ctx, Request{Project: dir, Name: "slow reader", Report: func(Status) {
			once.Do(func() { close(stuck) })
			<-unstick
		}})
		if err == nil {
			turn.Release(nil)
		}
	}()
	<-stuck
	released := make(chan struct{})
	go func() { first.Release(nil); close(released) }()
	select {
	case <-released:
	case <-time.After(2 * time.Second):
		t.Fatal("Release waited for a waiter's report")
	}
}

// TestNumbersBeyondTheNamesNeverHide: a "next" file with a number the
// ticket names cannot carry (corrupted, or written by someone else) never
// gives a build a ticket the others cannot see, which would let two builds
// of the project run at once: such a number is refused, nothing waits or
// runs on it, and a later build runs alone.
func TestNumbersBeyondTheNamesNeverHide(t *testing.T) {
	dir := project(t)
	qd := filepath.Join(dir, StateDir, QueueDir)
	if err := os.MkdirAll(qd, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(qd, nextName), []byte("999999999999999999"), 0o600); err != nil {
		t.Fatal(err)
	}
	q := newQueue()
	first, err := q.Wait(context.Background(), Request{Project: dir, Name: "first"})
	if err != nil {
		t.Fatal(err)
	}
	// The second would get number 10^18, a name no scan reads.
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	reported := make(chan struct{}, 1)
	second := make(chan outcome, 1)
	go func() {
		turn, err := q.Wait(ctx, Request{Project: dir, Name: "second", Report: func(Status) {
			select {
			case reported <- struct{}{}:
			default:
			}
		}})
		second <- outcome{turn: turn, err: err}
	}()
	select {
	case <-reported: // in the line, behind the first
	case o := <-second:
		if o.turn != nil {
			t.Fatal("the second build was admitted while the first runs")
		}
		if !errors.Is(o.err, ErrUnusable) {
			t.Fatalf("the second build's Wait = %v, want ErrUnusable", o.err)
		}
		second <- o
	}
	first.Release(nil)
	o := await(t, second)
	if o.turn == nil {
		return // refused: nothing ran on a number nobody can see
	}
	defer o.turn.Release(nil)
	if third, err := q.Wait(context.Background(), Request{Project: dir, Name: "third", Timeout: 300 * time.Millisecond}); !errors.Is(err, ErrTimeout) {
		third.Release(nil)
		t.Fatalf("a third build got %v while the second runs (tickets %v), want a queue timeout", err, tickets(t, dir))
	}
}

// TestLongLineLookedAtLessOften: builds waiting in a long line (a client
// that starts hundreds of safe builds at once) do not each read the whole
// line every second, which cost a whole core for 255 waiting tasks: with 48
// waiting, none looks again within 2.5 s when nothing changes, and the one
// behind the first still starts the moment the first ends.
func TestLongLineLookedAtLessOften(t *testing.T) {
	dir := project(t)
	q := newQueue()
	first, err := q.Wait(context.Background(), Request{Project: dir, Name: "first"})
	if err != nil {
		t.Fatal(err)
	}
	const n = 48
	var waits []<-chan outcome
	for i := range n {
		waits = append(waits, queued(t, q, Request{Project: dir, Name: fmt.Sprintf("w%d", i)}))
	}
	before := q.looks.Load()
	time.Sleep(2500 * time.Millisecond) // the time being measured, not a wait for readiness
	if looks := q.looks.Load() - before; looks >= n {
		t.Errorf("%d builds waiting in a line of %d looked at it %d times in 2.5 s", n, n+1, looks)
	}
	start := time.Now()
	first.Release(nil)
	o := await(t, waits[0])
	if o.err != nil {
		t.Fatal(o.err)
	}
	if d := time.Since(start); d > 500*time.Millisecond {
		t.Errorf("the next build started %v after the first ended", d)
	}
	o.turn.Release(nil)
	for _, w := range waits[1:] {
		o := await(t, w)
		if o.err != nil {
			t.Fatal(o.err)
		}
		o.turn.Release(nil)
	}
}

// TestOneLockWaitPerProcess: the builds of one process that wait for the
// queue's lock wait for each other in the process, and only one of them
// at a time waits for the kernel's lock: a blocked flock costs an open file
// and an OS thread each, and a server with a thousand calls waiting ran
// toward the runtime's limit of 10000 threads (828 threads for 500).
func TestOneLockWaitPerProcess(t *testing.T) {
	if _, err := os.Stat("/proc/self/fd"); err != nil {
		t.Skip("needs /proc/self/fd")
	}
	dir := project(t)
	qd, err := queueDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	l := &line{dir: qd, capacity: 1}
	lockPath := l.path(lockName)
	opens := func() int {
		n := 0
		entries, _ := os.ReadDir("/proc/self/fd")
		for _, e := range entries {
			if target, err := os.Readlink(filepath.Join("/proc/self/fd", e.Name())); err == nil && target == lockPath {
				n++
			}
		}
		return n
	}
	held, release := make(chan struct{}), make(chan struct{})
	go l.locked(context.Background(), func() error { close(held); <-release; return nil })
	<-held
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 100)
	for range 100 {
		go func() { done <- l.locked(ctx, func() error { return nil }) }()
	}
	deadline := time.Now().Add(time.Second) // the time being measured
	most := 0
	for time.Now().Before(deadline) {
		most = max(most, opens())
		time.Sleep(20 * time.Millisecond)
	}
	close(release)
	for range 100 {
		select {
		case err := <-done:
			if err != nil {
				t.Fatal(err)
			}
		case <-time.After(10 * time.Second):
			t.Fatal("a locked call did not end within 10 s")
		}
	}
	cancel()
	if most > 2 {
		t.Errorf("%d open files of the queue's lock while 101 calls of one process wanted it; want at most 2", most)
	}
}
