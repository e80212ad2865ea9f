package buildqueue

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/buildguard/buildguard/internal/filelock"
)

// The files of a queue directory. Only names that match are ever read or
// removed; anything else there is left alone.
const (
	lockName = "lock" // the queue's own lock, held for each change
	nextName = "next" // the next ticket number
)

// The states of a ticket.
const (
	stateWaiting = "waiting"
	stateRunning = "running"
	stateJoined  = "joined"
)

// maxTicketSeq is the largest ticket number a ticket's name can carry
// (ticketSeq: at most 18 digits). The numbers go round: after it comes 1.
const maxTicketSeq = 999_999_999_999_999_999

// counterReach is how far past the last live ticket the queue's counter
// (next) may point and still be followed; a counter further on, or behind
// the last live ticket, was not written by a queue in use (a hand, a
// corrupted file) and the number after the last live ticket is taken.
const counterReach = 1 << 32

// maxCreate bounds how many numbers enter tries when the path of the one it
// chose is taken by an entry made while the queue was locked (a process
// that writes in the queue without its lock).
const maxCreate = 16

// after is the ticket number that follows seq.
func after(seq int64) int64 {
	if seq >= maxTicketSeq || seq < 1 {
		return 1
	}
	return seq + 1
}

// dist is how many numbers b comes after a, going round (0 when a == b).
func dist(a, b int64) int64 {
	d := (b - a) % maxTicketSeq
	if d < 0 {
		d += maxTicketSeq
	}
	return d
}

// maxTicketBytes and maxResultBytes bound what is read from the queue.
const (
	maxTicketBytes = 64 << 10
	maxResultBytes = 8 << 20
)

// meta is the content of a ticket file. It never holds an owner token
// or a turn's secret.
type meta struct {
	Seq     int64  `json:"seq"`
	PID     int    `json:"pid"`
	Name    string `json:"name"`
	Front   string `json:"front,omitempty"`
	Key     string `json:"key,omitempty"`
	State   string `json:"state"`
	Joined  int64  `json:"joined,omitempty"`
	Since   int64  `json:"since"`             // unix ms: arrival
	Started int64  `json:"started,omitempty"` // unix ms: start of the run
	// Proof is the SHA-256 of the turn's secret (TurnEnv), never the
	// secret.
	Proof string `json:"proof,omitempty"`
}

func (m meta) entry(now time.Time) Entry {
	e := Entry{Name: m.Name, PID: m.PID, Front: m.Front, Running: m.State == stateRunning}
	from := m.Since
	if e.Running && m.Started != 0 {
		from = m.Started
	}
	e.For = max(0, now.Sub(time.UnixMilli(from)))
	return e
}

// line is one queue directory that admits up to capacity builds at once:
// 1 for a project, BUILDGUARD_MAX_BUILDS for the user's slots.
type line struct {
	dir      string
	capacity int
	// run is the project's run lock, which a build takes at its turn;
	// nil for the user's slots.
	run *runLock
	// ensure makes dir again when it went missing; nil: it is not made
	// again.
	ensure func() error
	// patience bounds each wait for the line's lock held by another
	// process (lockPatience); 0: no bound.
	patience time.Duration
}

// ticket is this process's entry in a line, locked for as long as it lives.
type ticket struct {
	l    *line
	f    *os.File
	path string
	m    meta
}

// view is what a scan found: the live tickets in arrival order.
type view struct {
	live []meta
	// base is the number of the first live ticket: the numbers go round,
	// and arrival order is the order of their distance from base.
	base int64
}

// order puts the live tickets in arrival order. Their numbers were handed
// out one after the other, going round after maxTicketSeq, so the first
// is the one after the widest gap between the numbers in use: live
// tickets 999999999999999998, 999999999999999999, 1, 2 arrived in that
// order.
func (v *view) order() {
	slices.SortFunc(v.live, func(a, b meta) int { return cmp.Compare(a.Seq, b.Seq) })
	n := len(v.live)
	if n == 0 {
		return
	}
	first, gap := 0, int64(-1)
	for i := range n {
		if g := dist(v.live[(i+n-1)%n].Seq, v.live[i].Seq); g > gap {
			first, gap = i, g
		}
	}
	v.live = slices.Concat(v.live[first:], v.live[:first])
	v.base = v.live[0].Seq
}

// before reports whether ticket a arrived before ticket b.
func (v view) before(a, b int64) bool { return dist(v.base, a) < dist(v.base, b) }

// add appends a ticket that arrived after every live one.
func (v *view) add(m meta) {
	if len(v.live) == 0 {
		v.base = m.Seq
	}
	v.live = append(v.live, m)
}

func (v view) find(seq int64) (meta, bool) {
	for _, m := range v.live {
		if m.Seq == seq {
			return m, true
		}
	}
	return meta{}, false
}

// ahead returns the live tickets before seq that take a place in the line
// (joined tickets wait for their leader, not for a place).
func (v view) ahead(seq int64) []meta {
	var out []meta
	for _, m := range v.live {
		if v.before(m.Seq, seq) && m.State != stateJoined {
			out = append(out, m)
		}
	}
	return out
}

func (l *line) path(name string) string { return filepath.Join(l.dir, name) }

func ticketPath(dir string, seq int64) string {
	return filepath.Join(dir, "t-"+strconv.FormatInt(seq, 10))
}
func resultPath(dir string, seq int64) string {
	return filepath.Join(dir, "r-"+strconv.FormatInt(seq, 10))
}

// locked runs f while holding the line's lock. The calls of this process
// take turns in the process first, so only one of them at a time waits for
// the kernel's lock: a blocked flock costs an open file and an OS thread.
func (l *line) locked(ctx context.Context, f func() error) error {
	turn := inProcess(l.dir)
	select {
	case turn <- struct{}{}:
	case <-ctx.Done():
		return ctx.Err()
	}
	defer func() { <-turn }()
	lf, err := l.lock(ctx)
	if err != nil {
		return err
	}
	defer lf.Close()
	return f()
}

// errImpatient ends a wait for a line's lock after its patience.
var errImpatient = errors.New("the queue's lock was held too long")

// lockOnce takes the lock of the file at p, waiting at most the line's
// patience.
func (l *line) lockOnce(ctx context.Context, p string) (*os.File, error) {
	if l.patience <= 0 {
		return filelock.LockContext(ctx, p)
	}
	pctx, cancel := context.WithTimeoutCause(ctx, l.patience, errImpatient)
	defer cancel()
	lf, err := filelock.LockContext(pctx, p)
	if err != nil && ctx.Err() == nil && errors.Is(context.Cause(pctx), errImpatient) {
		return nil, errImpatient
	}
	return lf, err
}

// maxRelock bounds how often lock takes the queue's lock again because its
// file was removed or replaced while it waited for it.
const maxRelock = 20

// lock takes the queue's lock: a lock on the file now at the lock's path
// (a file removed or replaced while its lock was awaited excludes nobody),
// in a queue directory made again when a hand removed it.
func (l *line) lock(ctx context.Context) (*os.File, error) {
	p := l.path(lockName)
	for i := 0; ; i++ {
		lf, err := l.lockOnce(ctx, p)
		if err == nil && filelock.IsAt(lf, p) {
			return lf, nil
		}
		if lf != nil {
			lf.Close()
		}
		switch {
		case ctx.Err() != nil:
			return nil, ctx.Err()
		case errors.Is(err, errImpatient):
			return nil, fmt.Errorf("%w: %s has been locked by another process for %s, while a change of the queue takes an instant: a process of this user holds it that is stopped or is not a build; find it (fuser %s) and end it", ErrUnusable, p, l.patience, p)
		case err != nil && !errors.Is(err, os.ErrNotExist):
			return nil, unusableFile(p, err)
		case i == maxRelock:
			return nil, fmt.Errorf("%w: %s was removed or replaced %d times while this build waited for it: stop whatever removes it", ErrUnusable, p, maxRelock)
		case l.ensure != nil:
			if err := l.ensure(); err != nil {
				return nil, err
			}
		}
	}
}

// lockTurns are the in-process turns of locked, one per line directory.
var lockTurns sync.Map // dir -> chan struct{} (capacity 1)

func inProcess(dir string) chan struct{} {
	c, _ := lockTurns.LoadOrStore(dir, make(chan struct{}, 1))
	return c.(chan struct{})
}

// scan reads the line, removing abandoned tickets (their lock is free: the
// holder died) and results nobody can read any more. It also returns the
// numbers whose names are taken by what it left in place: a directory, a
// FIFO, a symlink or a file that is not the queue's, named like a ticket
// or a result, is skipped, left alone, and its number is not handed out.
// Call it locked.
func (l *line) scan() (view, map[int64]bool, error) {
	entries, err := os.ReadDir(l.dir)
	if err != nil {
		return view{}, nil, fmt.Errorf("%w: reading %s: %w", ErrUnusable, l.dir, err)
	}
	var v view
	taken := map[int64]bool{}
	results := map[int64][]string{}
	for _, e := range entries {
		name := e.Name()
		if seq, _, ok := resultSeq(name); ok {
			if e.Type().IsRegular() {
				results[seq] = append(results[seq], name)
			} else {
				taken[seq] = true
			}
			continue
		}
		seq, ok := ticketSeq(name)
		if !ok {
			continue
		}
		if !e.Type().IsRegular() {
			taken[seq] = true
			continue
		}
		tm, alive, removed := l.look(seq, true)
		if alive {
			v.live = append(v.live, tm)
		}
		if !removed {
			taken[seq] = true
		}
	}
	v.order()
	for seq, names := range results {
		if _, leader := v.find(seq); leader || joinedBy(v, seq) {
			taken[seq] = true
			continue
		}
		for _, n := range names {
			if os.Remove(l.path(n)) != nil {
				taken[seq] = true
			}
		}
	}
	return v, taken, nil
}

// inspect reads ticket seq; alive is false when nobody holds its lock, and
// then, with remove (only while the queue is locked), the file is removed
// when it is one of the queue's tickets.
func (l *line) inspect(seq int64, remove bool) (meta, bool) {
	m, alive, _ := l.look(seq, remove)
	return m, alive
}

// look is inspect, also saying whether the file was removed. A file whose
// lock is free is removed only when it is this user's and holds ticket seq
// or nothing (its holder died between creating and writing it): anything
// else there was not written by the queue and is left alone.
func (l *line) look(seq int64, remove bool) (m meta, alive, removed bool) {
	p := ticketPath(l.dir, seq)
	f, err := filelock.OpenNoFollow(p, os.O_RDWR)
	if err != nil {
		return meta{}, false, false
	}
	defer f.Close()
	lerr := filelock.TryLock(f)
	if lerr != nil && !errors.Is(lerr, filelock.ErrWouldBlock) {
		return meta{}, false, false
	}
	got, valid, empty := readTicket(f, seq)
	if lerr == nil {
		// Abandoned: its holder died without removing it.
		fi, err := f.Stat()
		f.Close()
		if remove && err == nil && ownedByUs(fi) && (valid || empty) {
			removed = os.Remove(p) == nil
		}
		return meta{}, false, removed
	}
	if !valid {
		// A ticket we cannot read still holds its place: someone holds its
		// lock. The builds behind are told which file it is.
		got = meta{Seq: seq, State: stateWaiting, Since: time.Now().UnixMilli(),
			Name: fmt.Sprintf("%s, which holds no ticket buildguard wrote; the process that holds its lock (fuser %s) keeps this place", p, p)}
		if fi, err := f.Stat(); err == nil {
			got.Since = fi.ModTime().UnixMilli()
		}
	}
	return got, true, false
}

// readTicket reads the meta of ticket seq from f: valid when it is one,
// empty when f holds nothing.
func readTicket(f *os.File, seq int64) (m meta, valid, empty bool) {
	data, err := io.ReadAll(io.LimitReader(f, maxTicketBytes))
	if err != nil {
		return meta{}, false, false
	}
	if len(data) == 0 {
		return meta{}, false, true
	}
	valid = json.Unmarshal(data, &m) == nil && m.Seq == seq
	return m, valid, false
}

// nextSeq returns the number of a new ticket, one that arrives after every
// live ticket of v and whose name is not taken, and records the one after
// it. The numbers never run out: after maxTicketSeq comes 1, and the
// arrival order (view.order) goes round with them.
func (l *line) nextSeq(v view, taken map[int64]bool) (int64, error) {
	f, err := filelock.OpenNoFollow(l.path(nextName), os.O_RDWR|os.O_CREATE)
	if err != nil {
		return 0, unusableFile(l.path(nextName), err)
	}
	defer f.Close()
	data, _ := io.ReadAll(io.LimitReader(f, 32))
	seq, err := strconv.ParseInt(strings.TrimSpace(string(data)), 10, 64)
	if err != nil || seq < 1 || seq > maxTicketSeq {
		seq = 1 // not a number this queue wrote: the tickets say where it stands
	}
	if n := len(v.live); n > 0 {
		last := v.live[n-1].Seq
		if d := dist(last, seq); d == 0 || d > counterReach {
			seq = after(last)
		}
	}
	for range len(taken) + 1 {
		if !taken[seq] {
			break
		}
		seq = after(seq)
	}
	if err := rewrite(f, []byte(strconv.FormatInt(after(seq), 10))); err != nil {
		return 0, fmt.Errorf("%w: %w", ErrUnusable, err)
	}
	return seq, nil
}

// enter creates and locks a ticket for m (its Seq is filled in). Call it
// locked.
func (l *line) enter(m meta) (*ticket, view, error) {
	v, taken, err := l.scan()
	if err != nil {
		return nil, v, err
	}
	var f *os.File
	for i := 0; ; i++ {
		if m.Seq, err = l.nextSeq(v, taken); err != nil {
			return nil, v, err
		}
		f, err = filelock.OpenNoFollow(ticketPath(l.dir, m.Seq), os.O_RDWR|os.O_CREATE|os.O_EXCL)
		if !errors.Is(err, os.ErrExist) || i == maxCreate {
			break
		}
		taken[m.Seq] = true // made since the scan, by a process without the queue's lock
	}
	p := ticketPath(l.dir, m.Seq)
	switch {
	case errors.Is(err, os.ErrPermission):
		return nil, v, fmt.Errorf("%w: creating a ticket: %w: make %s writable by this user, or remove it (buildguard creates it anew)", ErrUnusable, err, l.dir)
	case errors.Is(err, os.ErrExist):
		return nil, v, fmt.Errorf("%w: creating a ticket: the names of %d ticket numbers in a row, up to %s, were taken while the queue was locked: a process writes in %s without taking its lock %s; stop it", ErrUnusable, maxCreate+1, p, l.dir, l.path(lockName))
	case err != nil:
		return nil, v, fmt.Errorf("%w: creating a ticket: %w", ErrUnusable, err)
	}
	if err := filelock.TryLock(f); err != nil {
		f.Close()
		_ = os.Remove(p)
		return nil, v, fmt.Errorf("%w: locking %s: %w", ErrUnusable, p, err)
	}
	t := &ticket{l: l, f: f, path: p, m: m}
	if err := t.write(); err != nil {
		t.drop()
		return nil, v, err
	}
	v.add(m)
	return t, v, nil
}

// write stores the ticket's meta and marks the line's directory changed
// (its time of change), which the builds waiting in a quiet line check
// instead of reading every ticket (waiter.quiet). Call it locked.
func (t *ticket) write() error {
	data, err := json.Marshal(t.m)
	if err != nil {
		return err
	}
	if err := rewrite(t.f, data); err != nil {
		return fmt.Errorf("%w: writing %s: %w", ErrUnusable, t.path, err)
	}
	// Best effort: where it fails, the waiting builds see the change at
	// their next full look (maxQuiet).
	_ = os.Chtimes(t.l.dir, time.Time{}, time.Now())
	return nil
}

// drop releases the ticket's lock and removes it, unless what stands at
// its path now is not this ticket (a hand removed it, the number went to
// another ticket). Call it locked (or when nobody else can find it yet).
func (t *ticket) drop() {
	if t.f == nil {
		return
	}
	ours := filelock.IsAt(t.f, t.path)
	t.f.Close()
	t.f = nil
	if ours {
		_ = os.Remove(t.path)
	}
}

// lost reports whether the ticket is no longer at its path: a hand removed
// or replaced it, or the queue's directory with it.
func (t *ticket) lost() bool { return t.f != nil && !filelock.IsAt(t.f, t.path) }

// reenter gives a lost ticket a new one at the end of the line, waiting
// for a place of its own. Call it locked.
func (l *line) reenter(t *ticket) (view, error) {
	t.f.Close() // what stands at its path is not ours: left alone
	t.f = nil
	m := t.m
	m.State, m.Joined, m.Started = stateWaiting, 0, 0
	nt, v, err := l.enter(m)
	if err != nil {
		return v, err
	}
	*t = *nt
	return v, nil
}

func rewrite(f *os.File, data []byte) error {
	if _, err := f.WriteAt(data, 0); err != nil {
		return err
	}
	return f.Truncate(int64(len(data)))
}

// writeResult leaves result for the builds that joined seq: written to a
// temporary file, then renamed, so a reader sees all of it or nothing.
func (l *line) writeResult(seq int64, result []byte) error {
	tmp := resultPath(l.dir, seq) + ".tmp"
	_ = os.Remove(tmp)
	f, err := filelock.OpenNoFollow(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL)
	if err != nil {
		return err
	}
	_, werr := f.Write(result)
	if cerr := f.Close(); werr == nil {
		werr = cerr
	}
	if werr == nil {
		werr = os.Rename(tmp, resultPath(l.dir, seq))
	}
	if werr != nil {
		_ = os.Remove(tmp)
	}
	return werr
}

// readResult reads the result build seq left, if any.
func (l *line) readResult(seq int64) ([]byte, bool) {
	f, err := filelock.OpenNoFollow(resultPath(l.dir, seq), os.O_RDONLY)
	if err != nil {
		return nil, false
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, maxResultBytes+1))
	if err != nil || len(data) == 0 || len(data) > maxResultBytes {
		return nil, false
	}
	return data, true
}
