//go:build unix

package buildqueue

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/buildguard/buildguard/internal/filelock"
)

// These tests play a hostile local process against the queue
// (docs/safe-build.md#4): whatever a hand does to .buildguard, its queue or
// their files, a build either queues correctly or fails with an error that
// says what to do; two builds of a project never run at once, and no wait
// goes on without a deadline.

// stillWaiting fails the test when the build behind has been admitted: it
// gives it a moment to be (wrongly) admitted first.
func stillWaiting(t *testing.T, c <-chan outcome) {
	t.Helper()
	select {
	case o := <-c:
		// Its turn is not released: the queue's lock may be the test's
		// own; its files go with the test process.
		t.Fatalf("a build was admitted while it had to wait (err %v)", o.err)
	case <-time.After(300 * time.Millisecond):
	}
}

// statuses starts a Wait like queued and passes on every status it reports.
func statuses(t *testing.T, q *Queue, req Request) (<-chan outcome, <-chan Status) {
	t.Helper()
	seen := make(chan Status, 64)
	req.Report = func(s Status) {
		select {
		case seen <- s:
		default:
		}
	}
	return queued(t, q, req), seen
}

// expectStatus waits (at most 10 s) for a status that matches.
func expectStatus(t *testing.T, seen <-chan Status, what string, match func(Status) bool) Status {
	t.Helper()
	timeout := time.After(10 * time.Second)
	for {
		select {
		case s := <-seen:
			if match(s) {
				return s
			}
		case <-timeout:
			t.Fatalf("no status %s within 10s", what)
		}
	}
}

// TestRemovedUnderARunningBuild: removing or replacing the running build's
// ticket, the queue's directory or .buildguard never lets a second build
// start beside it: the next build waits, says that a build without a
// ticket runs, and starts once the first has ended. A file the hand put in
// a ticket's place is not the queue's and is left alone.
func TestRemovedUnderARunningBuild(t *testing.T) {
	for _, c := range []struct {
		name string
		do   func(dir string) error
		left []string // files of the hand's, named like tickets, left alone
	}{
		{"ticket removed", func(dir string) error { return removeTickets(dir) }, nil},
		{"ticket replaced by an unlocked file", func(dir string) error {
			qd := filepath.Join(dir, StateDir, QueueDir)
			names, _ := filepath.Glob(filepath.Join(qd, "t-*"))
			for _, n := range names {
				if err := os.Remove(n); err != nil {
					return err
				}
				if err := os.WriteFile(n, []byte(`{"state":"running"}`), 0o600); err != nil {
					return err
				}
			}
			return nil
		}, []string{"t-1"}},
		{"queue removed", func(dir string) error { return os.RemoveAll(filepath.Join(dir, StateDir, QueueDir)) }, nil},
		{"queue replaced", func(dir string) error {
			qd := filepath.Join(dir, StateDir, QueueDir)
			if err := os.Rename(qd, qd+".old"); err != nil {
				return err
			}
			return os.Mkdir(qd, 0o700)
		}, nil},
		{".buildguard removed", func(dir string) error { return os.RemoveAll(filepath.Join(dir, StateDir)) }, nil},
		{".buildguard moved away", func(dir string) error {
			return os.Rename(filepath.Join(dir, StateDir), filepath.Join(dir, "old"))
		}, nil},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := project(t)
			holder := startHelper(t, dir)
			holder.expect(t, "admitted")
			if err := c.do(dir); err != nil {
				t.Fatal(err)
			}
			next, seen := statuses(t, newQueue(), Request{Project: dir, Name: "next"})
			expectStatus(t, seen, "naming a build without a ticket", func(s Status) bool { return s.Unticketed })
			stillWaiting(t, next)
			if _, err := io.WriteString(holder.stdin, "release\n"); err != nil {
				t.Fatal(err)
			}
			holder.expect(t, "released")
			o := await(t, next)
			if o.err != nil {
				t.Fatal(o.err)
			}
			o.turn.Release(nil)
			if got := tickets(t, dir); !slices.Equal(got, c.left) {
				t.Errorf("tickets left behind: %v, want %v", got, c.left)
			}
		})
	}
}

func removeTickets(dir string) error {
	names, err := filepath.Glob(filepath.Join(dir, StateDir, QueueDir, "t-*"))
	for _, n := range names {
		err = errors.Join(err, os.Remove(n))
	}
	return err
}

// TestWaitersEnterAgainAfterQueueRemoved: builds waiting when .buildguard
// is removed take new tickets, in the order they look again, behind the
// running build: each starts after the one before has ended.
func TestWaitersEnterAgainAfterQueueRemoved(t *testing.T) {
	dir := project(t)
	holder := startHelper(t, dir)
	holder.expect(t, "admitted")
	q := newQueue()
	first, seen := statuses(t, q, Request{Project: dir, Name: "first"})
	if err := os.RemoveAll(filepath.Join(dir, StateDir)); err != nil {
		t.Fatal(err)
	}
	expectStatus(t, seen, "of the first waiter back in a new line", func(s Status) bool { return s.Unticketed })
	second, seen2 := statuses(t, q, Request{Project: dir, Name: "second"})
	expectStatus(t, seen2, "behind the first waiter", func(s Status) bool {
		return s.Place == 2 && len(s.Ahead) == 1 && s.Ahead[0].Name == "first"
	})
	if _, err := io.WriteString(holder.stdin, "release\n"); err != nil {
		t.Fatal(err)
	}
	o := await(t, first)
	if o.err != nil {
		t.Fatal(o.err)
	}
	stillWaiting(t, second)
	o.turn.Release(nil)
	o2 := await(t, second)
	if o2.err != nil {
		t.Fatal(o2.err)
	}
	o2.turn.Release(nil)
}

// TestLockFileReplacedWhileAwaited: a build that waited for the queue's
// lock on a file that was then replaced does not take the replaced file's
// lock for the queue's: it waits for the lock of the file at the path.
func TestLockFileReplacedWhileAwaited(t *testing.T) {
	dir := project(t)
	q := newQueue()
	warm, err := q.Wait(context.Background(), Request{Project: dir, Name: "warm"})
	if err != nil {
		t.Fatal(err)
	}
	warm.Release(nil)
	lock := filepath.Join(dir, StateDir, QueueDir, lockName)
	old := flocked(t, lock)
	done := make(chan outcome, 1)
	go func() {
		turn, err := q.Wait(context.Background(), Request{Project: dir, Name: "x"})
		done <- outcome{turn: turn, err: err}
	}()
	blockedOn(t, old)
	if err := os.Remove(lock); err != nil {
		t.Fatal(err)
	}
	current := flocked(t, lock) // another process's change of the queue, in progress
	old.Close()
	stillWaiting(t, done)
	current.Close()
	o := await(t, done)
	if o.err != nil {
		t.Fatal(o.err)
	}
	o.turn.Release(nil)
}

// blockedOn waits (at most 10 s) until someone waits for the lock of f: a
// blocked lock on its inode in /proc/locks (Linux only).
func blockedOn(t *testing.T, f *os.File) {
	t.Helper()
	fi, err := f.Stat()
	if err != nil {
		t.Fatal(err)
	}
	ino := fmt.Sprintf(":%d ", fi.Sys().(*syscall.Stat_t).Ino)
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(5 * time.Millisecond) {
		data, err := os.ReadFile("/proc/locks")
		if err != nil {
			t.Skipf("no /proc/locks to see a blocked lock: %v", err)
		}
		for _, l := range strings.Split(string(data), "\n") {
			if strings.Contains(l, "->") && strings.Contains(l, ino) {
				return
			}
		}
		if time.Now().After(deadline) {
			t.Fatal("nobody waited for the queue's lock within 10s")
		}
	}
}

// flocked creates (or opens) path and locks it, as another process would.
func flocked(t *testing.T, path string) *os.File {
	t.Helper()
	f, err := filelock.OpenNoFollow(path, os.O_RDWR|os.O_CREATE)
	if err != nil {
		t.Fatal(err)
	}
	if err := filelock.Lock(f, true); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	return f
}

// TestHostileQueueFiles: a symlink, a FIFO or a directory where the queue's
// lock or counter should be fails the build with an error that says what to
// do, at once (a FIFO never blocks the open); in a ticket's place it is
// skipped and left alone.
func TestHostileQueueFiles(t *testing.T) {
	makers := map[string]func(path string) error{
		"symlink":   func(p string) error { return os.Symlink(filepath.Join(filepath.Dir(p), "elsewhere"), p) },
		"FIFO":      func(p string) error { return syscall.Mkfifo(p, 0o600) },
		"directory": func(p string) error { return os.Mkdir(p, 0o700) },
	}
	for kind, make := range makers {
		for _, name := range []string{lockName, nextName, "t-1"} {
			t.Run(kind+" as "+name, func(t *testing.T) {
				dir := project(t)
				qd := filepath.Join(dir, StateDir, QueueDir)
				if err := os.MkdirAll(qd, 0o700); err != nil {
					t.Fatal(err)
				}
				if err := make(filepath.Join(qd, name)); err != nil {
					t.Fatal(err)
				}
				ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
				defer cancel()
				turn, err := newQueue().Wait(ctx, Request{Project: dir, Name: "x"})
				if name == "t-1" {
					if err != nil {
						t.Fatalf("a %s named like a ticket stopped the queue: %v", kind, err)
					}
					turn.Release(nil)
					if _, err := os.Lstat(filepath.Join(qd, name)); err != nil {
						t.Errorf("the %s was removed: %v", kind, err)
					}
					return
				}
				if err == nil {
					turn.Release(nil)
					t.Fatalf("a %s as the queue's %s was used", kind, name)
				}
				if !errors.Is(err, ErrUnusable) || !strings.Contains(err.Error(), "remove it") || !strings.Contains(err.Error(), name) {
					t.Fatalf("Wait = %v, want an ErrUnusable naming %s and saying to remove it", err, name)
				}
			})
		}
	}
}

// TestRunLockHeldByAnother: while something outside the queue holds the
// project's run lock, a build waits (never starts beside it), says so, and
// its queue timeout ends the wait.
func TestRunLockHeldByAnother(t *testing.T) {
	dir := project(t)
	d, err := filelock.OpenDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	if err := filelock.TryLock(d); err != nil {
		t.Fatal(err)
	}
	_, err = newQueue().Wait(context.Background(), Request{Project: dir, Name: "x", Timeout: 300 * time.Millisecond})
	var te *TimeoutError
	if !errors.As(err, &te) || !te.Last.Unticketed {
		t.Fatalf("Wait = %v, want a TimeoutError while a build without a ticket runs", err)
	}
	if !strings.Contains(err.Error(), "without a ticket") {
		t.Errorf("the timeout does not say what it waited for: %v", err)
	}
	d.Close()
	turn, err := newQueue().Wait(context.Background(), Request{Project: dir, Name: "x", Timeout: 10 * time.Second})
	if err != nil {
		t.Fatalf("after the run lock was let go: %v", err)
	}
	turn.Release(nil)
}

// TestRunLockFileWhereNoDirectoryLocks: where the root directory cannot be
// locked (Windows, some network file systems) the run lock is the file
// .buildguard/run, with the same exclusion and the same wake-up.
func TestRunLockFileWhereNoDirectoryLocks(t *testing.T) {
	dir := project(t)
	if _, err := queueDir(dir); err != nil {
		t.Fatal(err)
	}
	a, b := &runLock{root: dir, viaFile: true}, &runLock{root: dir, viaFile: true}
	held, err := a.take()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := b.take(); !errors.Is(err, filelock.ErrWouldBlock) {
		t.Fatalf("a second take = %v, want ErrWouldBlock", err)
	}
	if d, err := filelock.OpenDir(dir); err != nil || filelock.TryLock(d) != nil {
		t.Fatal("the file lock locked the directory")
	} else {
		d.Close()
	}
	woken := b.released()
	held.Close()
	select {
	case <-woken:
	case <-time.After(10 * time.Second):
		t.Fatal("the release of the run file woke nobody within 10s")
	}
	f, err := b.take()
	if err != nil {
		t.Fatal(err)
	}
	f.Close()
}

// TestAnotherUsersFilesAndReadOnlyQueue: a queue whose directory this user
// cannot write, or whose lock file is another user's, fails the build with
// an error that says what to do. Run as root, the build runs as nobody in a
// process of its own; root itself queues through another user's files.
func TestAnotherUsersFilesAndReadOnlyQueue(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("making files another user's needs root")
	}
	const nobody = 65534
	bin := sharedBinary(t)
	for _, c := range []struct {
		name  string
		setup func(qd string) error
		want  string
	}{
		{"read-only queue directory", func(qd string) error { return os.Chmod(qd, 0o500) }, "writable by this user"},
		{"another user's lock file", func(qd string) error {
			if err := os.WriteFile(filepath.Join(qd, lockName), nil, 0o600); err != nil {
				return err
			}
			return os.Chown(filepath.Join(qd, lockName), 0, 0)
		}, "cannot read and write it"},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := sharedDir(t)
			qd := filepath.Join(dir, StateDir, QueueDir)
			if err := os.MkdirAll(qd, 0o700); err != nil {
				t.Fatal(err)
			}
			for _, p := range []string{dir, filepath.Join(dir, StateDir), qd} {
				if err := os.Chown(p, nobody, nobody); err != nil {
					t.Fatal(err)
				}
			}
			if err := c.setup(qd); err != nil {
				t.Fatal(err)
			}
			out, err := runHelperAs(bin, dir, nobody)
			if err == nil || !strings.Contains(string(out), "error ") || !strings.Contains(string(out), c.want) {
				t.Fatalf("as another user: %v, %s; want an error saying %q", err, out, c.want)
			}
		})
	}
	// Root, whose files these are not, queues through them.
	dir := project(t)
	qd := filepath.Join(dir, StateDir, QueueDir)
	first, err := newQueue().Wait(context.Background(), Request{Project: dir, Name: "first"})
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range []string{lockName, nextName} {
		if err := os.Chown(filepath.Join(qd, n), nobody, nobody); err != nil {
			t.Fatal(err)
		}
	}
	next := queued(t, newQueue(), Request{Project: dir, Name: "next"})
	stillWaiting(t, next)
	first.Release(nil)
	o := await(t, next)
	if o.err != nil {
		t.Fatal(o.err)
	}
	o.turn.Release(nil)
}

// helperAsUserTimeout bounds one build of the helper run as another user.
const helperAsUserTimeout = 20 * time.Second

// runHelperAs runs the test binary's queue helper (BUILDQUEUE_HELPER) on
// dir as user and group uid and returns its stdout; it is killed after
// helperAsUserTimeout.
func runHelperAs(bin, dir string, uid uint32) ([]byte, error) {
	ctx, cancel := context.WithTimeout(context.Background(), helperAsUserTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, "-test.run=^$")
	cmd.Env = append(os.Environ(), "BUILDQUEUE_HELPER="+dir)
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: uid, Gid: uid}}
	cmd.Stderr = os.Stderr
	out, err := cmd.Output()
	if ctx.Err() != nil {
		return out, fmt.Errorf("the build as another user did not end within %s: %w", helperAsUserTimeout, ctx.Err())
	}
	return out, err
}

// sharedDir is a fresh directory that every user may reach.
func sharedDir(t *testing.T) string {
	t.Helper()
	dir := project(t)
	for d := dir; d != filepath.Dir(d) && d != os.TempDir(); d = filepath.Dir(d) {
		if err := os.Chmod(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// sharedBinary is a copy of the test binary that every user may run.
func sharedBinary(t *testing.T) string {
	t.Helper()
	data, err := os.ReadFile(os.Args[0])
	if err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(sharedDir(t), "buildqueue.test")
	if err := os.WriteFile(p, data, 0o755); err != nil {
		t.Fatal(err)
	}
	return p
}

// TestQueueLockHeldTooLong: a process that holds the queue's lock far
// longer than a change of the queue takes (stopped in the middle of one, or
// not a build) fails the build with a message once its patience is over,
// instead of a wait without a word and without an end.
func TestQueueLockHeldTooLong(t *testing.T) {
	dir := project(t)
	qd, err := queueDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	flocked(t, filepath.Join(qd, lockName))
	q := newQueue()
	q.patience = 200 * time.Millisecond
	_, err = q.Wait(context.Background(), Request{Project: dir, Name: "x"})
	if !errors.Is(err, ErrUnusable) || !strings.Contains(err.Error(), "locked by another process") || !strings.Contains(err.Error(), "fuser") {
		t.Fatalf("Wait = %v, want an ErrUnusable that says the lock is held and how to find its holder", err)
	}
}

// TestRootThisUserCannotOpen: a project's root directory this user may
// enter and write but not read cannot be locked by it; the build is refused
// saying what to do, and never takes .buildguard/run for the run lock
// instead, which would let it start beside a build that holds the
// directory's lock. Run as root, the build runs as nobody in a process of
// its own, while root holds the lock of the root directory.
func TestRootThisUserCannotOpen(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("a directory root cannot open needs another user")
	}
	const nobody = 65534
	bin := sharedBinary(t)
	dir := sharedDir(t)
	if err := os.Chown(dir, nobody, nobody); err != nil {
		t.Fatal(err)
	}
	d, err := filelock.OpenDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	if err := filelock.TryLock(d); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(dir, 0o300); err != nil {
		t.Fatal(err)
	}
	out, err := runHelperAs(bin, dir, nobody)
	if strings.Contains(string(out), "admitted") {
		t.Fatalf("as a user that cannot open the root, the build started while another held the run lock: %s", out)
	}
	if err == nil || !strings.Contains(string(out), "error ") || !strings.Contains(string(out), "make it readable") {
		t.Fatalf("as a user that cannot open the root: %v, %s; want an error saying to make it readable", err, out)
	}
	t.Logf("refused: %s", out)
}

// TestStrayEntriesNamedLikeTickets: what is not a ticket file, named like a
// ticket or a result — a directory, a FIFO or a symlink with the largest
// number a ticket can carry, a file the queue did not write, names with a
// leading zero, too many digits or no number — neither stops the queue
// nor uses up its numbers: builds queue past it in their order, and it is
// left as it was.
func TestStrayEntriesNamedLikeTickets(t *testing.T) {
	const top = "t-999999999999999999"
	for _, c := range []struct {
		name string
		make func(path string) error
	}{
		{"directory " + top, func(p string) error { return os.Mkdir(p, 0o700) }},
		{"FIFO " + top, func(p string) error { return syscall.Mkfifo(p, 0o600) }},
		{"symlink " + top, func(p string) error { return os.Symlink("elsewhere", p) }},
		{"file of a hand " + top, func(p string) error { return os.WriteFile(p, []byte("mine"), 0o600) }},
		{"empty file of another user t-7", func(p string) error {
			if err := os.WriteFile(p, nil, 0o666); err != nil {
				return err
			}
			if os.Geteuid() != 0 {
				return os.Chmod(p, 0o400) // this user cannot open it for the lock
			}
			return os.Chown(p, 65534, 65534)
		}},
		{"directory r-999999999999999999", func(p string) error { return os.Mkdir(p, 0o700) }},
		{"file t-0999", func(p string) error { return os.WriteFile(p, []byte("{}"), 0o600) }},
		{"file t-1000000000000000000", func(p string) error { return os.WriteFile(p, []byte("{}"), 0o600) }},
		{"directory t-x", func(p string) error { return os.Mkdir(p, 0o700) }},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := project(t)
			qd := filepath.Join(dir, StateDir, QueueDir)
			if err := os.MkdirAll(qd, 0o700); err != nil {
				t.Fatal(err)
			}
			name := c.name[strings.LastIndexByte(c.name, ' ')+1:]
			stray := filepath.Join(qd, name)
			if err := c.make(stray); err != nil {
				t.Fatal(err)
			}
			before, err := os.Lstat(stray)
			if err != nil {
				t.Fatal(err)
			}
			q := newQueue()
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			for round := range 2 {
				first, err := q.Wait(ctx, Request{Project: dir, Name: "first"})
				if err != nil {
					t.Fatalf("round %d: a stray %s stopped the queue: %v", round, c.name, err)
				}
				second := queued(t, q, Request{Project: dir, Name: "second"})
				stillWaiting(t, second)
				first.Release(nil)
				o := await(t, second)
				if o.err != nil {
					t.Fatalf("round %d: the second build: %v", round, o.err)
				}
				o.turn.Release(nil)
			}
			after, err := os.Lstat(stray)
			if err != nil || after.Mode() != before.Mode() || after.Size() != before.Size() || !os.SameFile(before, after) {
				t.Errorf("the stray %s was not left as it was: %v", c.name, err)
			}
			if got := tickets(t, dir); !slices.Equal(got, []string{name}) {
				t.Errorf("queue entries after the builds: %v, want only %s", got, name)
			}
		})
	}
}

// TestTicketNumbersGoRound: the ticket numbers never run out. A counter at
// the end of the numbers (a hand's, or a very long life) hands out the
// largest numbers a name can carry, then 1, 2, …, and the builds run one
// at a time in the order they arrived, across the turn of the numbers.
func TestTicketNumbersGoRound(t *testing.T) {
	dir := project(t)
	qd := filepath.Join(dir, StateDir, QueueDir)
	if err := os.MkdirAll(qd, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(qd, nextName), []byte(strconv.FormatInt(maxTicketSeq-1, 10)), 0o600); err != nil {
		t.Fatal(err)
	}
	q := newQueue()
	first, err := q.Wait(context.Background(), Request{Project: dir, Name: "b0"})
	if err != nil {
		t.Fatal(err)
	}
	var waits []<-chan outcome
	for i := 1; i <= 4; i++ {
		places := make(chan int, 1)
		waits = append(waits, queued(t, q, Request{Project: dir, Name: fmt.Sprint("b", i), Report: func(s Status) {
			select {
			case places <- s.Place:
			default:
			}
		}}))
		if p := <-places; p != i+1 {
			t.Fatalf("b%d reported place %d, want %d (tickets %v)", i, p, i+1, tickets(t, dir))
		}
	}
	want := []string{"t-1", "t-2", "t-3", "t-999999999999999998", "t-999999999999999999"}
	if got := tickets(t, dir); !slices.Equal(got, want) {
		t.Fatalf("tickets %v, want %v", got, want)
	}
	first.Release(nil)
	for i, c := range waits {
		o := await(t, c)
		if o.err != nil {
			t.Fatal(o.err)
		}
		if i+1 < len(waits) {
			stillWaiting(t, waits[i+1])
		}
		o.turn.Release(nil)
	}
}

// TestJoinAcrossTheTurnOfNumbers: an identical build that arrives while one
// waits joins it also when their numbers went round between them (the one
// waiting holds the largest number, the new one 1), and the earlier build
// never joins the later.
func TestJoinAcrossTheTurnOfNumbers(t *testing.T) {
	dir := project(t)
	qd := filepath.Join(dir, StateDir, QueueDir)
	if err := os.MkdirAll(qd, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(qd, nextName), []byte(strconv.FormatInt(maxTicketSeq-1, 10)), 0o600); err != nil {
		t.Fatal(err)
	}
	q := newQueue()
	running, err := q.Wait(context.Background(), Request{Project: dir, Name: "classes", Key: "k"})
	if err != nil {
		t.Fatal(err)
	}
	leader, seen := statuses(t, q, Request{Project: dir, Name: "classes", Key: "k"})
	joined := make(chan bool, 1)
	joiner := queued(t, q, Request{Project: dir, Name: "classes", Key: "k", Report: func(s Status) {
		select {
		case joined <- s.Joined != nil:
		default:
		}
	}})
	if !<-joined {
		t.Fatalf("the build numbered 1 did not join the one numbered %d waiting ahead of it (tickets %v)", int64(maxTicketSeq), tickets(t, dir))
	}
	running.Release(nil)
	o := await(t, leader)
	if o.err != nil {
		t.Fatal(o.err)
	}
	for len(seen) > 0 {
		if s := <-seen; s.Joined != nil {
			t.Fatal("the earlier build joined the later one")
		}
	}
	if _, j := o.turn.Joined(); j {
		t.Fatal("the earlier build joined the later one")
	}
	o.turn.Release([]byte(`{"outcome":"ok"}`))
	j := await(t, joiner)
	if j.err != nil {
		t.Fatal(j.err)
	}
	if res, ok := j.turn.Joined(); !ok || string(res) != `{"outcome":"ok"}` {
		t.Fatalf("the joined build got %q, %v", res, ok)
	}
}

// TestLockedFileThatIsNoTicket: a file named like a ticket that holds no
// ticket, while a process holds its lock, keeps its place like a build (it
// may be one that could not write its ticket); the builds behind are told
// its path and how to find its holder. When the lock goes, the file is left
// alone and the builds go on.
func TestLockedFileThatIsNoTicket(t *testing.T) {
	dir := project(t)
	qd := filepath.Join(dir, StateDir, QueueDir)
	if err := os.MkdirAll(qd, 0o700); err != nil {
		t.Fatal(err)
	}
	stray := filepath.Join(qd, "t-5")
	if err := os.WriteFile(stray, []byte("garbage"), 0o600); err != nil {
		t.Fatal(err)
	}
	f, err := filelock.OpenNoFollow(stray, os.O_RDWR)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := filelock.TryLock(f); err != nil {
		t.Fatal(err)
	}
	next, seen := statuses(t, newQueue(), Request{Project: dir, Name: "next"})
	s := expectStatus(t, seen, "naming the locked file", func(s Status) bool { return s.Place == 2 && len(s.Ahead) == 1 })
	if msg := s.String(); !strings.Contains(msg, stray) || !strings.Contains(msg, "fuser "+stray) || s.Ahead[0].For > time.Hour {
		t.Errorf("the status does not name the locked file and its holder: %s", msg)
	}
	stillWaiting(t, next)
	f.Close()
	o := await(t, next)
	if o.err != nil {
		t.Fatal(o.err)
	}
	o.turn.Release(nil)
	if data, err := os.ReadFile(stray); err != nil || string(data) != "garbage" {
		t.Errorf("the file was not left alone: %q, %v", data, err)
	}
}

// TestStrayResultKeepsItsNumber: a directory where a ticket's result would
// go keeps its number from every new ticket, also when an abandoned ticket
// of that number is removed beside it: the build with that number could
// not leave its result for the builds that joined it.
func TestStrayResultKeepsItsNumber(t *testing.T) {
	dir := project(t)
	qd := filepath.Join(dir, StateDir, QueueDir)
	if err := os.MkdirAll(filepath.Join(qd, "r-7"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(qd, "t-7"), []byte(`{"seq":7,"state":"waiting"}`), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(qd, nextName), []byte("7"), 0o600); err != nil {
		t.Fatal(err)
	}
	turn, err := newQueue().Wait(context.Background(), Request{Project: dir, Name: "x"})
	if err != nil {
		t.Fatal(err)
	}
	defer turn.Release(nil)
	if got, want := tickets(t, dir), []string{"r-7", "t-8"}; !slices.Equal(got, want) {
		t.Errorf("queue entries %v, want %v: the abandoned ticket removed, the stray left, number 7 not handed out", got, want)
	}
}
