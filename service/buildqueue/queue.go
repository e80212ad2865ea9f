package buildqueue

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/buildguard/buildguard/internal/filelock"
)

// StateDir is the project's state directory and QueueDir the queue's
// directory in it (docs/safe-build.md#9).
const (
	StateDir = ".buildguard"
	QueueDir = "queue"
)

// MaxBuildsEnv caps the guarded builds of one user that run at once,
// across projects (docs/decisions.md#D18). Unset or empty: no cap.
const MaxBuildsEnv = "BUILDGUARD_MAX_BUILDS"

// TurnEnv is set in the environment of an admitted build's command: the
// path of the ticket that admitted it, "#" and a secret of the turn (64 hex
// digits, 256 random bits). A build queued from inside that command in the
// same project is admitted at once instead of waiting forever behind the
// build it is part of, when the ticket is running and holds the secret's
// SHA-256 (ticket files hold only the hash; the secret is in no file).
// Nothing else admits a nested build: not a value read from disk, not a
// value kept from an earlier build (a Gradle daemon's), not a path alone
// (docs/decisions.md#D22).
const TurnEnv = "BUILDGUARD_QUEUE_TURN"

// rescan is how often a waiting build checks whether its line changed even
// when nothing woke it: the safety net under the lock waits, and the clock
// of its reports. A check of a line that did not change costs one stat of
// its directory (waiter.quiet); a changed line is read in full.
const rescan = time.Second

// maxRescan bounds how far apart a waiting build's checks of a long line
// are (rescanEvery).
const maxRescan = 10 * time.Second

// maxQuiet bounds how long a waiting build goes without reading its line
// in full while its directory says nothing changed.
const maxQuiet = time.Minute

// settled is how much older than the look that read it a directory's time
// of change must be before a waiting build trusts it to move with the next
// change: file systems keep it to the nearest 2 s at worst (FAT), and the
// kernel's clock for it lags by a tick. A time with a fraction of a second
// comes from a file system that keeps finer times: settledFine.
const (
	settled     = 3 * time.Second
	settledFine = 100 * time.Millisecond
)

// maxBackoff bounds the doublings of the interval between the checks of a
// line that stays quiet (rescanEvery).
const maxBackoff = 4

// The errors of Wait.
var (
	// ErrTimeout means the build waited its whole queue timeout; it is
	// wrapped by a *TimeoutError.
	ErrTimeout = errors.New("timed out waiting in the build queue")
	// ErrUnusable means the queue's directory or files cannot be used: a
	// symlink where .buildguard or its queue should be, a directory that
	// cannot be written, a bad BUILDGUARD_MAX_BUILDS. Nothing ran.
	ErrUnusable = errors.New("the build queue cannot be used")
)

// TimeoutError is a queue timeout, with where the build stood.
type TimeoutError struct {
	Timeout time.Duration
	Last    Status
}

func (e *TimeoutError) Error() string {
	return fmt.Sprintf("%v after %s (%s)", ErrTimeout, e.Timeout, e.Last)
}

func (e *TimeoutError) Unwrap() error { return ErrTimeout }

// Config configures a Queue. The zero value is ready to use.
type Config struct {
	// MaxBuilds caps the guarded builds of this user that run at once
	// across projects; 0 reads BUILDGUARD_MAX_BUILDS (unset or empty: no
	// cap; anything but a whole number from 1 makes every Wait fail with
	// ErrUnusable), a negative value means no cap.
	MaxBuilds int
	// SlotDir is the per-user directory of the build slots; "" means
	// <user cache directory>/buildguard/slots.
	SlotDir string
	// Logger receives diagnostics; nil means none.
	Logger hclog.Logger
}

// Queue admits builds. It keeps no state between calls: everything lives in
// the queue directories, so any number of Queues in any number of
// processes share one line per project. It is safe for concurrent use.
type Queue struct {
	cfg      Config
	cfgErr   error
	log      hclog.Logger
	looks    atomic.Int64  // looks at a line by waiting builds after the first (rescanEvery)
	checks   atomic.Int64  // checks that found a line quiet (waiter.quiet)
	patience time.Duration // lockPatience; shorter in tests
}

// lockPatience bounds the wait for a queue's lock while another process
// holds it. A change of the queue holds it for an instant (a look at the
// line), so a longer hold is a process stopped in the middle of one, or
// one that is not a build: the build fails with a message instead of
// waiting for ever without a word.
const lockPatience = 2 * time.Minute

// New returns a Queue with cfg's defaults filled in.
func New(cfg Config) *Queue {
	q := &Queue{cfg: cfg, log: cfg.Logger, patience: lockPatience}
	if q.log == nil {
		q.log = hclog.NewNullLogger()
	}
	if cfg.MaxBuilds == 0 {
		if raw := strings.TrimSpace(os.Getenv(MaxBuildsEnv)); raw != "" {
			n, err := strconv.Atoi(raw)
			if err != nil || n < 1 {
				q.cfgErr = fmt.Errorf("%w: %s=%q must be a whole number of at least 1 (or unset for no cap)", ErrUnusable, MaxBuildsEnv, raw)
			}
			q.cfg.MaxBuilds = n
		}
	}
	if q.cfg.SlotDir == "" && q.cfg.MaxBuilds > 0 {
		cache, err := os.UserCacheDir()
		if err != nil && q.cfgErr == nil {
			q.cfgErr = fmt.Errorf("%w: %s is set, but there is no user cache directory for its slots: %w", ErrUnusable, MaxBuildsEnv, err)
		}
		q.cfg.SlotDir = filepath.Join(cache, "buildguard", "slots")
	}
	return q
}

// Request is one build asking for its turn.
type Request struct {
	// Project is a directory of the project, absolute: its root (Root),
	// where the build was started or any directory below, selects the
	// queue. Required.
	Project string
	// Name is what the builds behind see: the build's name, or the
	// wrapper's command.
	Name string
	// Front is where the build comes from ("MCP", "build run", "terminal").
	Front string
	// Key makes identical builds coalesce: a build whose Key equals that
	// of a build still waiting joins it. "" never joins and is never
	// joined.
	Key string
	// Timeout bounds the wait; 0 means no bound.
	Timeout time.Duration
	// Report, when not nil, is told where the build stands: when it
	// starts waiting, whenever its place or what is ahead changes, and
	// every Heartbeat. It is called from Wait's goroutine.
	Report func(Status)
	// Heartbeat is how often Report is called while nothing changes; 0
	// means only on changes.
	Heartbeat time.Duration
	// Grace is how long the build, at its turn, waits for processes of an
	// earlier build of the project that outlived its supervisor before it
	// ends them (Turn.Outlived), and how long the watchdog waits for this
	// build's processes after SIGTERM when this process dies during the
	// build (EnableWatchdog); 0 means DefaultGrace, a negative value ends
	// them at once.
	Grace time.Duration
}

// Turn is a build's admission: it may run until Release. A Turn that joined
// another build has its result instead (Joined).
type Turn struct {
	q       *Queue
	run     *os.File // the project's run lock
	project *ticket
	slot    *ticket
	joined  []byte
	nested  string
	secret  string        // the turn's secret (TurnEnv), only in memory
	dir     string        // the queue's directory
	record  *os.File      // the record of the build's processes (Started)
	grace   time.Duration // Request.Grace, for the watchdog
	watched *Watchdog     // the watchdog told of the record's group
	pgid    int           // that group
	waited  time.Duration
	ahead   int
	found   int // processes of an earlier build waited for (Outlived)
	ended   int // and ended
}

// Joined returns the result the joined build left, and true, when this
// build joined an identical one instead of running: it must not run.
func (t *Turn) Joined() ([]byte, bool) { return t.joined, t.joined != nil }

// Waited is how long the build waited for its turn.
func (t *Turn) Waited() time.Duration { return t.waited }

// Ahead is how many builds were ahead of this one when it arrived.
func (t *Turn) Ahead() int { return t.ahead }

// Env returns the variables an admitted build's command gets, so a guarded
// build it starts in the same project does not wait behind it.
func (t *Turn) Env() []string {
	switch {
	case t.project != nil:
		return []string{TurnEnv + "=" + t.project.path + "#" + t.secret}
	case t.nested != "":
		return []string{TurnEnv + "=" + t.nested}
	}
	return nil
}

// Release ends the turn: the next build may start. result, when not nil, is
// left for the builds that joined this one (only a result they may take as
// their own: not one cancelled for this caller alone); with nil they fall
// back to their places and run a build of their own. Release is
// idempotent and never blocks on a live holder for long: it takes the
// queue's lock for an instant.
func (t *Turn) Release(result []byte) {
	if t == nil {
		return
	}
	ctx := context.Background()
	t.forget() // the build has ended, its processes with it: before the run lock
	if r := t.run; r != nil {
		t.run = nil
		r.Close() // first: the build behind, woken by the ticket, finds it free
	}
	if s := t.slot; s != nil {
		t.slot = nil
		if err := s.l.locked(ctx, func() error { s.drop(); return nil }); err != nil {
			s.drop()
		}
	}
	p := t.project
	if p == nil {
		return
	}
	t.project = nil
	err := p.l.locked(ctx, func() error {
		if result != nil {
			v, _, err := p.l.scan()
			if err == nil && joinedBy(v, p.m.Seq) {
				if err := p.l.writeResult(p.m.Seq, result); err != nil {
					t.q.log.Warn("leaving the result for the joined builds failed; they will build again", "error", err)
				}
			}
		}
		p.drop()
		return nil
	})
	if err != nil {
		t.q.log.Warn("releasing the build queue", "error", err)
		p.drop() // the lock goes with the file; the next build finds it free
	}
}

// joinedByOther reports whether a live ticket other than self joined seq.
func joinedByOther(v view, seq, self int64) bool {
	for _, m := range v.live {
		if m.Seq != self && m.State == stateJoined && m.Joined == seq {
			return true
		}
	}
	return false
}

func joinedBy(v view, seq int64) bool {
	for _, m := range v.live {
		if m.State == stateJoined && m.Joined == seq {
			return true
		}
	}
	return false
}

// Wait queues the build and returns when it may run, when it joined an
// identical build that has ended with a result, or with an error: ctx's
// (the build is cancelled: it leaves the line, nothing ran), a
// *TimeoutError, or one wrapping ErrUnusable. Whatever Wait returns, it
// leaves no ticket behind except in a Turn.
func (q *Queue) Wait(ctx context.Context, req Request) (*Turn, error) {
	if q.cfgErr != nil {
		return nil, q.cfgErr
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	// Started while the build waits and asks for its hold, never on its
	// path (EnableWatchdog).
	current().start()
	if !filepath.IsAbs(req.Project) {
		return nil, fmt.Errorf("%w: the project directory %q is not absolute", ErrUnusable, req.Project)
	}
	root := Root(req.Project)
	dir, err := queueDir(root)
	if err != nil {
		return nil, err
	}
	if t, ticket := nestedTurn(dir); t != "" {
		q.log.Debug("admitted inside the build that holds the turn", "ticket", ticket)
		return &Turn{q: q, nested: t, dir: dir, grace: req.Grace}, nil
	}
	secret, proof := newSecret()
	start := time.Now()
	if req.Timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeoutCause(ctx, req.Timeout, ErrTimeout)
		defer cancel()
	}
	w := &waiter{q: q, req: req, start: start, startOnTurn: q.cfg.MaxBuilds <= 0, proof: proof}
	l := &line{dir: dir, capacity: 1, run: &runLock{root: root}, patience: q.patience,
		ensure: func() error { _, err := queueDir(root); return err }}
	p, err := w.wait(ctx, l, req.Key, 0)
	if err != nil {
		if w.run != nil {
			w.run.Close()
		}
		return nil, w.fail(ctx, err)
	}
	turn := &Turn{q: q, run: w.run, project: p, secret: secret, dir: dir, grace: req.Grace, waited: time.Since(start), ahead: w.firstAhead}
	if p.m.State == stateJoined {
		turn.joined = w.result
		turn.project = nil
		return turn, nil
	}
	if turn.found, turn.ended, err = w.endOutlived(ctx, dir); err != nil {
		turn.Release(nil)
		return nil, w.fail(ctx, err)
	}
	if q.cfg.MaxBuilds > 0 {
		sdir, err := slotDir(q.cfg.SlotDir)
		if err == nil {
			sl := &line{dir: sdir, capacity: q.cfg.MaxBuilds, patience: q.patience,
				ensure: func() error { _, err := slotDir(q.cfg.SlotDir); return err }}
			turn.slot, err = w.wait(ctx, sl, "", q.cfg.MaxBuilds)
		}
		if err != nil {
			turn.Release(nil)
			return nil, w.fail(ctx, err)
		}
	}
	if w.startOnTurn {
		return turn, nil // marked running when its turn came
	}
	// Started: from now on nobody joins it.
	if err := p.l.locked(context.WithoutCancel(ctx), func() error {
		p.m.State, p.m.Started = stateRunning, time.Now().UnixMilli()
		return p.write()
	}); err != nil {
		turn.Release(nil)
		return nil, err
	}
	turn.waited = time.Since(start)
	return turn, nil
}

// nestedTurn returns TurnEnv's value, and the ticket it names, when it
// names a running ticket of the queue in dir that holds the hash of its
// secret: this process runs inside that build.
func nestedTurn(dir string) (value, ticket string) {
	v := os.Getenv(TurnEnv)
	p, secret, ok := splitTurn(v)
	if !ok || !sameDir(filepath.Dir(p), dir) {
		return "", ""
	}
	seq, ok := ticketSeq(filepath.Base(p))
	if !ok {
		return "", ""
	}
	l := &line{dir: dir, capacity: 1}
	tm, alive := l.inspect(seq, false) // unlocked: look, never remove
	if !alive || tm.State != stateRunning || !proves(secret, tm.Proof) {
		return "", ""
	}
	return v, p
}

// secretLen is the length of a turn's secret: 32 random bytes in hex.
const secretLen = 64

// newSecret returns a fresh secret for a turn and its proof, the hash a
// ticket holds.
func newSecret() (secret, proof string) {
	var b [secretLen / 2]byte
	_, _ = rand.Read(b[:]) // never fails (crypto/rand)
	secret = hex.EncodeToString(b[:])
	return secret, proofOf(secret)
}

func proofOf(secret string) string {
	sum := sha256.Sum256([]byte(secret))
	return hex.EncodeToString(sum[:])
}

// proves reports whether secret is the one whose hash a ticket holds.
func proves(secret, proof string) bool {
	return proof != "" && subtle.ConstantTimeCompare([]byte(proofOf(secret)), []byte(proof)) == 1
}

// splitTurn splits a TurnEnv value into the ticket's path and the turn's
// secret; ok is false for any other form.
func splitTurn(v string) (path, secret string, ok bool) {
	i := strings.LastIndexByte(v, '#')
	if i <= 0 || len(v)-i-1 != secretLen {
		return "", "", false
	}
	if _, err := hex.DecodeString(v[i+1:]); err != nil {
		return "", "", false
	}
	return v[:i], v[i+1:], true
}

// sameDir reports whether a and b name one directory, however each was
// spelled (a symlinked working directory, a canonical --project-dir).
func sameDir(a, b string) bool {
	if a == b {
		return true
	}
	fa, err := os.Stat(a)
	if err != nil {
		return false
	}
	fb, err := os.Stat(b)
	return err == nil && os.SameFile(fa, fb)
}

// queueDir returns project/.buildguard/queue, creating what is missing and
// refusing a symlink (or anything but a directory) at either step.
func queueDir(project string) (string, error) {
	state := filepath.Join(project, StateDir)
	if err := ensureStateDir(state); err != nil {
		return "", err
	}
	q := filepath.Join(state, QueueDir)
	return q, ensureDir(q, 0o700)
}

// slotDir returns the per-user slot directory, created private to the
// user when missing; its last element must not be a symlink.
func slotDir(dir string) (string, error) {
	if err := os.MkdirAll(filepath.Dir(dir), 0o700); err != nil {
		return "", fmt.Errorf("%w: creating %s: %w", ErrUnusable, filepath.Dir(dir), err)
	}
	return dir, ensureDir(dir, 0o700)
}

// ensureDir makes sure dir is a real directory (not a symlink to one),
// creating it with perm when it is missing.
func ensureDir(dir string, perm os.FileMode) error {
	for range 2 {
		fi, err := os.Lstat(dir)
		switch {
		case err == nil && fi.Mode()&os.ModeSymlink != 0:
			return fmt.Errorf("%w: %s is a symlink; buildguard never follows one there: remove it (it is recreated as a directory)", ErrUnusable, dir)
		case err == nil && !fi.IsDir():
			return fmt.Errorf("%w: %s is not a directory: remove it (it is recreated as a directory)", ErrUnusable, dir)
		case err == nil && !ownedByUs(fi):
			return fmt.Errorf("%w: %s belongs to another user, whose builds could hold this one back for ever: remove it (it is recreated as this user's)", ErrUnusable, dir)
		case err == nil:
			return nil
		case !errors.Is(err, os.ErrNotExist):
			return fmt.Errorf("%w: %w", ErrUnusable, err)
		}
		if err := os.Mkdir(dir, perm); err != nil && !errors.Is(err, os.ErrExist) {
			return fmt.Errorf("%w: creating %s: %w; make the project directory writable", ErrUnusable, dir, err)
		}
	}
	return nil
}

// waiter is one Wait in progress.
type waiter struct {
	q     *Queue
	req   Request
	start time.Time

	proof       string // the hash of the turn's secret, for the project's ticket
	firstAhead  int
	pending     *Status  // a report to pass on once the queue is unlocked
	startOnTurn bool     // the project's turn is the start: no slot to wait for
	run         *os.File // the project's run lock, taken at the turn
	result      []byte   // the joined build's result
	last        Status
	live        int // the live tickets of the line at the last look
	reported    time.Time
	lastAt      time.Time // when last was found
	any         bool      // a status was reported
	seen        seen      // the line's directory at the last full look
}

// seen is a line's directory as a full look found it, locked, after its
// own changes: while the directory's time of change stays the same, no
// ticket entered, left or changed state (ticket.write marks it), and
// nothing needs reading (waiter.quiet).
type seen struct {
	fi    os.FileInfo // nil: nothing to compare with
	mtime time.Time
	at    time.Time
}

// see records the line's directory. Call it locked.
func (w *waiter) see(l *line) {
	now := time.Now()
	fi, err := os.Stat(l.dir)
	if err != nil {
		w.seen = seen{}
		return
	}
	w.seen = seen{fi: fi, mtime: fi.ModTime(), at: now}
}

// quiet reports whether the line is as the last full look found it: the
// same directory, its time of change the same and settled, and that look
// less than maxQuiet ago. A waiting build whose line is quiet reads none
// of its tickets (docs/safe-build.md#4).
func (w *waiter) quiet(l *line, now time.Time) bool {
	s := w.seen
	margin := settled
	if s.mtime.Nanosecond() != 0 {
		margin = settledFine
	}
	if s.fi == nil || now.Sub(s.at) >= maxQuiet || s.at.Sub(s.mtime) <= margin {
		return false
	}
	fi, err := os.Stat(l.dir)
	return err == nil && os.SameFile(fi, s.fi) && fi.ModTime().Equal(s.mtime)
}

// fail turns a wait's error into Wait's: ctx's own error or a TimeoutError.
func (w *waiter) fail(ctx context.Context, err error) error {
	if errors.Is(context.Cause(ctx), ErrTimeout) {
		return &TimeoutError{Timeout: w.req.Timeout, Last: w.last}
	}
	return err
}

// wait enters line l and waits until fewer than l.capacity builds are ahead
// (then the ticket is returned, still in state waiting), or, with a key,
// until the identical build it joined has left a result (the ticket is
// returned dropped, in state joined, with w.result set). slots, when not 0,
// says the line is the user's slots.
func (w *waiter) wait(ctx context.Context, l *line, key string, slots int) (*ticket, error) {
	var t *ticket
	var wake []watch
	done := false
	// Entering and the first look at the line are one change of the queue.
	err := l.locked(ctx, func() error {
		var v view
		var err error
		m := meta{PID: os.Getpid(), Name: w.req.Name, Front: w.req.Front, Key: key,
			State: stateWaiting, Since: time.Now().UnixMilli()}
		if slots == 0 {
			m.Proof = w.proof
		}
		t, v, err = l.enter(m)
		if err != nil {
			return err
		}
		if slots == 0 {
			w.firstAhead = len(v.ahead(t.m.Seq))
		}
		wake, done, err = w.step(l, t, v, slots)
		w.see(l)
		return err
	})
	if err != nil {
		if t != nil {
			t.drop()
		}
		return nil, err
	}
	if done {
		return t, nil
	}
	w.flush()
	leave := func() {
		if err := l.locked(context.WithoutCancel(ctx), func() error { t.drop(); return nil }); err != nil {
			t.drop()
		}
	}
	watches := map[string]<-chan struct{}{}
	tick := time.NewTimer(maxRescan) // set before each sleep, once the check reported
	defer tick.Stop()
	woke, quiet := false, 0 // quiet: checks in a row that found the line quiet
	for first := true; ; first = false {
		if now := time.Now(); !first && !woke && w.quiet(l, now) {
			quiet++
			w.q.checks.Add(1)
			w.age(now)
			w.flush()
		} else if !first {
			quiet = 0
			var err error
			wake, done, err = w.look(ctx, l, t, slots)
			if err != nil {
				leave()
				return nil, err
			}
			if done {
				return t, nil
			}
			w.flush()
		}
		tick.Reset(w.nextCheck(quiet, time.Now()))
		woke = sleep(ctx, watches, wake, tick.C)
		if ctx.Err() != nil {
			leave()
			return nil, ctx.Err()
		}
	}
}

// look reads the line again, locked, and takes the step it calls for
// (step); a ticket a hand removed enters the line again at its end.
func (w *waiter) look(ctx context.Context, l *line, t *ticket, slots int) (wake []watch, done bool, err error) {
	err = l.locked(ctx, func() error {
		w.q.looks.Add(1) // locked: a test that changes the line locked counts the looks after it
		v, _, err := l.scan()
		if err != nil {
			return err
		}
		if t.lost() {
			// A hand removed our ticket (or the queue's directory): a new
			// one, at the end of the line.
			w.q.log.Debug("the build's ticket was removed; entering the line again", "ticket", t.path)
			if v, err = l.reenter(t); err != nil {
				return err
			}
		}
		wake, done, err = w.step(l, t, v, slots)
		w.see(l)
		return err
	})
	return wake, done, err
}

// watch is a lock whose release wakes a waiting build: a ticket's, or the
// project's run lock (run not nil).
type watch struct {
	path string
	run  *runLock
}

func ticketWatch(dir string, seq int64) watch { return watch{path: ticketPath(dir, seq)} }

func (w watch) released() <-chan struct{} {
	if w.run != nil {
		return w.run.released()
	}
	return filelock.Released(w.path)
}

// sleep waits until a lock of wake is released (woke), the rescan tick
// comes or ctx ends. watches keeps one release watch per lock across the
// calls of one wait; a lock no longer in wake loses its watch.
func sleep(ctx context.Context, watches map[string]<-chan struct{}, wake []watch, tick <-chan time.Time) (woke bool) {
	for p := range watches {
		if !slices.ContainsFunc(wake, func(w watch) bool { return w.path == p }) {
			delete(watches, p) // its goroutine ends with the lock it waits on
		}
	}
	cases := make([]<-chan struct{}, 0, len(wake))
	for _, w := range wake {
		if watches[w.path] == nil {
			watches[w.path] = w.released()
		}
		cases = append(cases, watches[w.path])
	}
	ictx, icancel := context.WithCancel(ctx)
	defer icancel()
	select {
	case <-anyOf(ictx, cases):
		return true
	case <-tick:
	case <-ctx.Done():
	}
	return false
}

// rescanEvery is how long a waiting build goes without checking its line
// when nothing wakes it. Each look at a changed line reads every ticket, so
// n builds waiting in a busy line of n cost n*n reads a look: a long line
// (a client that starts hundreds of safe builds) is checked less often, up
// to maxRescan, but at least every heartbeat. A line found quiet quiet
// times in a row is checked half as often for each, up to maxRescan: a
// change ahead of the build is reported at most that much later. The wake
// on the release of the ticket ahead, a cancel and the timeout are as
// quick as ever.
func (w *waiter) rescanEvery(quiet int) time.Duration {
	d := min(rescan*time.Duration(max(1, (w.live+15)/16))<<min(quiet, maxBackoff), maxRescan)
	if hb := w.req.Heartbeat; hb > 0 {
		d = min(d, max(hb, rescan))
	}
	return d
}

// nextCheck is how long a waiting build sleeps before it checks its line
// again when nothing wakes it: rescanEvery, but no longer than until its
// next heartbeat is due, so a report comes at least every Heartbeat (or
// every rescan, when that is longer) however far the checks of a quiet
// line backed off (docs/safe-build.md#5).
func (w *waiter) nextCheck(quiet int, now time.Time) time.Duration {
	d := w.rescanEvery(quiet)
	if hb := w.req.Heartbeat; hb > 0 && w.req.Report != nil && w.any {
		d = min(d, max(w.reported.Add(max(hb, rescan)).Sub(now), 0))
	}
	return d
}

// step looks at the line once (locked): it joins, rejoins or leaves a
// joined build, takes the run lock at the project's turn, reports the
// status, and says whether t may go on (done) or which locks' release
// should wake it. An error is the run lock's: nothing was taken.
func (w *waiter) step(l *line, t *ticket, v view, slots int) (wake []watch, done bool, err error) {
	now := time.Now()
	w.live = len(v.live)
	before := t.m
	defer func() {
		if t.f != nil && t.m != before {
			if err := t.write(); err != nil {
				w.q.log.Debug("updating the ticket", "error", err)
			}
		}
	}()
	if t.m.State == stateJoined {
		if _, alive := v.find(t.m.Joined); !alive {
			if res, ok := l.readResult(t.m.Joined); ok {
				w.result = res
				t.drop()
				if !joinedByOther(v, t.m.Joined, t.m.Seq) {
					_ = os.Remove(resultPath(l.dir, t.m.Joined)) // the last reader
				}
				return nil, true, nil
			}
			// The leader went away without a result: back to our own place.
			t.m.State, t.m.Joined = stateWaiting, 0
		}
	}
	if t.m.State == stateWaiting && t.m.Key != "" {
		for _, m := range v.live {
			if v.before(m.Seq, t.m.Seq) && m.Key == t.m.Key && m.State == stateWaiting {
				t.m.State, t.m.Joined = stateJoined, m.Seq
				break
			}
		}
	}
	var st Status
	if t.m.State == stateJoined {
		leader, _ := v.find(t.m.Joined)
		e := leader.entry(now)
		ahead := v.ahead(leader.Seq)
		st = Status{Place: len(ahead) + 1, Joined: &e}
		for _, m := range ahead {
			st.Ahead = append(st.Ahead, m.entry(now))
		}
		wake = []watch{ticketWatch(l.dir, leader.Seq)}
	} else {
		ahead := v.ahead(t.m.Seq)
		if len(ahead) < l.capacity {
			st, wake, done, err = w.atTurn(l, t, slots, now)
			if done || err != nil {
				return nil, done, err
			}
		} else {
			st = Status{Place: len(ahead) + 1, Slots: slots}
			for _, m := range ahead {
				st.Ahead = append(st.Ahead, m.entry(now))
			}
			if l.capacity == 1 {
				wake = []watch{ticketWatch(l.dir, ahead[len(ahead)-1].Seq)}
			} else {
				for _, m := range ahead[:min(len(ahead), 64)] {
					wake = append(wake, ticketWatch(l.dir, m.Seq))
				}
			}
		}
	}
	st.Waited = now.Sub(w.start)
	w.report(st, now)
	return wake, false, nil
}

// atTurn is step when t's turn has come: it takes the project's run lock
// (a line of slots has none) and marks a build that starts now running
// (done); while a build whose ticket a hand removed still holds the run
// lock, it returns the status to report and the lock to wake on instead.
// An error is the run lock's: nothing was taken.
func (w *waiter) atTurn(l *line, t *ticket, slots int, now time.Time) (st Status, wake []watch, done bool, err error) {
	if l.run != nil && w.run == nil {
		f, err := l.run.take()
		switch {
		case errors.Is(err, filelock.ErrWouldBlock):
			return Status{Place: 1, Unticketed: true}, []watch{{path: l.run.root + string(os.PathSeparator) + runName, run: l.run}}, false, nil
		case err != nil:
			return Status{}, nil, false, err
		}
		w.run = f
	}
	if w.startOnTurn && slots == 0 {
		// Started: from now on nobody joins it.
		t.m.State, t.m.Started = stateRunning, now.UnixMilli()
	}
	return Status{}, nil, true, nil
}

// age reports the last status again as of now, its times moved on: the
// heartbeat of a quiet line, which nothing was read for.
func (w *waiter) age(now time.Time) {
	st, d := w.last, now.Sub(w.lastAt)
	st.Ahead = slices.Clone(st.Ahead)
	for i := range st.Ahead {
		st.Ahead[i].For += d
	}
	if st.Joined != nil {
		j := *st.Joined
		j.For += d
		st.Joined = &j
	}
	st.Waited = now.Sub(w.start)
	w.report(st, now)
}

// report passes st on when it differs from the last one, or a heartbeat is
// due.
func (w *waiter) report(st Status, now time.Time) {
	changed := !w.any || !st.same(w.last)
	w.last, w.lastAt = st, now
	if w.req.Report == nil {
		return
	}
	if changed || (w.req.Heartbeat > 0 && now.Sub(w.reported) >= w.req.Heartbeat) {
		w.any, w.reported = true, now
		w.pending = &st
	}
}

// flush passes on the status report decided while the queue was locked,
// now that it is not: a slow reader (a client that does not read its
// progress) must not hold up the builds of the project.
func (w *waiter) flush() {
	if p := w.pending; p != nil {
		w.pending = nil
		w.req.Report(*p)
	}
}

// anyOf returns a channel closed when any of cs is closed; its goroutines
// end when ctx is done.
func anyOf(ctx context.Context, cs []<-chan struct{}) <-chan struct{} {
	if len(cs) == 1 {
		return cs[0]
	}
	out := make(chan struct{})
	var once sync.Once
	for _, c := range cs {
		go func() {
			select {
			case <-c:
				once.Do(func() { close(out) })
			case <-ctx.Done():
			}
		}()
	}
	return out
}
