package tools

import (
	"crypto/rand"
	"encoding/hex"
	"sync"
	"time"

	"github.com/buildguard/buildguard/service/safebuild"
)

// The bounds of the safe builds that go on without their call
// (docs/safe-build.md#14).
const (
	// DefaultKeptBuilds is how many such builds a service keeps, running
	// or finished, when Deps.KeptBuilds is zero.
	DefaultKeptBuilds = 16
	// DefaultKeepResult is how long a finished one's result stays
	// readable after the build ended, when Deps.KeepResult is zero.
	DefaultKeepResult = 10 * time.Minute
	// The range of answerWithinMs and of `mcp --answer-within`.
	MinAnswerWithin = time.Second
	MaxAnswerWithin = 10 * time.Minute
)

// detachedBuilds are the safe builds of a service whose call answered
// `running` before they ended: each runs on without that call, and keeps
// its answer, once it has one, for the calls that resume it. At most max
// of them are kept; a finished one is dropped keepFor after it ended, or
// sooner when room is needed (those already read first, then the one that
// ended first); a running one is never dropped, and a call that finds max
// of them running waits for its own build instead of answering early.
type detachedBuilds struct {
	max     int
	keepFor time.Duration

	mu   sync.Mutex
	byID map[string]*detachedBuild
}

func newDetachedBuilds(max int, keep time.Duration) *detachedBuilds {
	if max <= 0 {
		max = DefaultKeptBuilds
	}
	if keep <= 0 {
		keep = DefaultKeepResult
	}
	return &detachedBuilds{max: max, keepFor: keep, byID: map[string]*detachedBuild{}}
}

// detachedBuild is one safe build run by a goroutine of its own, watched
// while it runs, with its answer once it ended.
type detachedBuild struct {
	watch  *buildWatch
	within time.Duration // the answerWithin of the call that started it
	done   chan struct{} // closed once answer and err are set

	answer Result
	err    error

	// set under detachedBuilds.mu
	id    string    // "" until the build is kept
	ended time.Time // zero while it runs
	read  bool      // a call returned its answer
}

// finish records the build's answer and wakes every call that waits for it.
func (d *detachedBuild) finish(s *detachedBuilds, answer Result, err error) {
	d.answer, d.err = answer, err
	s.mu.Lock()
	d.ended = time.Now()
	s.mu.Unlock()
	close(d.done)
}

// keep gives d an id and keeps it; false when max builds are kept and all
// of them still run.
func (s *detachedBuilds) keep(d *detachedBuild) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.expire(time.Now())
	if len(s.byID) >= s.max && !s.dropOne() {
		return false
	}
	d.id = newBuildID()
	s.byID[d.id] = d
	return true
}

// get returns the build called id, nil when none is kept under it (never
// kept, expired or dropped).
func (s *detachedBuilds) get(id string) *detachedBuild {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.expire(time.Now())
	return s.byID[id]
}

// markRead notes that a call returned d's answer.
func (s *detachedBuilds) markRead(d *detachedBuild) {
	s.mu.Lock()
	d.read = true
	s.mu.Unlock()
}

// expire drops the finished builds that ended more than keep before now.
func (s *detachedBuilds) expire(now time.Time) {
	for id, d := range s.byID {
		if !d.ended.IsZero() && now.Sub(d.ended) > s.keepFor {
			delete(s.byID, id)
		}
	}
}

// dropOne drops one finished build, one already read first, else the one
// that ended first; false when every kept build still runs.
func (s *detachedBuilds) dropOne() bool {
	var victim *detachedBuild
	for _, d := range s.byID {
		switch {
		case d.ended.IsZero():
		case victim == nil, d.read && !victim.read,
			d.read == victim.read && d.ended.Before(victim.ended):
			victim = d
		}
	}
	if victim == nil {
		return false
	}
	delete(s.byID, victim.id)
	return true
}

// newBuildID is 128 random bits in hex.
func newBuildID() string {
	b := make([]byte, 16)
	_, _ = rand.Read(b) // crypto/rand.Read never fails (Go 1.24)
	return hex.EncodeToString(b)
}

// buildWatch follows one detached build for the calls that wait for it:
// what the running answer says (how long, where its log is, its latest
// line or place in the queue), and the progress reporters of the calls
// waiting now, each of which gets the build's progress while it waits.
type buildWatch struct {
	build safebuild.Build
	start time.Time

	mu      sync.Mutex
	logFile string
	lines   int
	latest  string // the latest output line, as progress reports it
	queued  string // where it stands in the queue, until it has its turn
	calls   map[*watcher]struct{}
}

// watcher is one waiting call's progress reporters; nil reports nothing.
type watcher struct {
	progress safebuild.ProgressFunc
	queued   func(string)
}

func newBuildWatch(b safebuild.Build, start time.Time) *buildWatch {
	return &buildWatch{build: b, start: start, calls: map[*watcher]struct{}{}}
}

// listen adds a waiting call's reporters; the returned func removes them.
// A report made before it returned may still reach them.
func (w *buildWatch) listen(progress safebuild.ProgressFunc, queued func(string)) (stop func()) {
	c := &watcher{progress: progress, queued: queued}
	w.mu.Lock()
	w.calls[c] = struct{}{}
	w.mu.Unlock()
	return func() {
		w.mu.Lock()
		delete(w.calls, c)
		w.mu.Unlock()
	}
}

// The reporters of the build (safebuild.Request's Progress, Queued and
// LogStarted). Each report goes to the calls waiting when it was made,
// outside the lock, so that a call slow to send its progress holds up no
// other call's start or end of waiting; a call whose wait ended gets none
// (the MCP server sends nothing for a call that has returned).
func (w *buildWatch) progress(lines int, message string) {
	w.mu.Lock()
	w.lines, w.latest, w.queued = lines, message, ""
	calls := w.waiting()
	w.mu.Unlock()
	for _, c := range calls {
		if c.progress != nil {
			c.progress(lines, message)
		}
	}
}

func (w *buildWatch) queue(message string) {
	w.mu.Lock()
	w.queued = message
	calls := w.waiting()
	w.mu.Unlock()
	for _, c := range calls {
		if c.queued != nil {
			c.queued(message)
		}
	}
}

// waiting lists the calls waiting now; w.mu is held.
func (w *buildWatch) waiting() []*watcher {
	calls := make([]*watcher, 0, len(w.calls))
	for c := range w.calls {
		calls = append(calls, c)
	}
	return calls
}

func (w *buildWatch) logStarted(path string) {
	w.mu.Lock()
	w.logFile, w.queued = path, ""
	w.mu.Unlock()
}

// snapshot is what the running answer says of the build now.
func (w *buildWatch) snapshot() (logFile string, lines int, latest, queued string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.logFile, w.lines, w.latest, w.queued
}
