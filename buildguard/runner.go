package buildguard

import (
	"errors"
	"io"
	"os"
	"sync"
	"syscall"
	"time"

	"github.com/hashicorp/go-hclog"
)

// Runner runs one child process. It separates how the child runs (a process
// group with inherited or copied stdio, or a session on a pseudo-terminal)
// from the hold session that decides when it runs and what its exit means.
//
// The session calls Start once, then Wait in one goroutine while it may call
// Signal, Kill and Resize from another; Close is deferred and runs on every
// path. Every method is safe to call in any state.
type Runner interface {
	// Start launches the child. A non-nil error means no child runs; it
	// wraps ErrCannotRun.
	Start() error
	// Wait blocks until the child exited and returns its exit code: the
	// child's own code, or 128+n when signal n ended it. When the child
	// exited 0, Wait first waits up to Command.Grace for the other processes
	// of its process group to end (docs/decisions.md#D12); if some still run
	// then, they are killed and Wait returns code 0 with a
	// *StragglersError. In every case it kills whatever is left of the
	// group and waits a bounded time for the child's output to drain. A
	// caller that reports a build as ok only on (0, nil) keeps the rule
	// "exit 0 and an empty group".
	Wait() (int, error)
	// Signal sends sig to the child's process group. It does nothing before
	// Start or once Wait has collected the child.
	Signal(sig os.Signal) error
	// Kill sends SIGKILL to the child's process group. It is idempotent and
	// does nothing before Start or once Wait has collected the child.
	Kill() error
	// Resize makes the child's terminal follow the size of ours; without a
	// terminal it does nothing.
	Resize() error
	// Close releases what Start acquired and restores our terminal. It is
	// idempotent and safe to defer before Start.
	Close() error
}

// Command is what a Runner runs and where the child's output goes.
type Command struct {
	// Argv is the child's argument vector, run directly without a shell.
	// Argv[0] is looked up in PATH when it contains no path separator.
	// Required.
	Argv []string
	// Dir is the child's working directory; "" means ours.
	Dir string
	// Env is the child's environment; nil means ours.
	Env []string
	// Stdin is the child's input; nil means os.Stdin.
	Stdin io.Reader
	// Stdout receives the child's standard output; nil means os.Stdout.
	Stdout io.Writer
	// Stderr receives the child's standard error; nil means os.Stderr. Under
	// a pty the child has one output stream and it goes to Stdout. When
	// Stderr is Stdout (the same writer), the child gets one pipe for both,
	// so their order is the order it wrote them in.
	Stderr io.Writer
	// Transcript, when not nil, receives a copy of everything the child
	// writes to stdout and stderr. A failing Transcript is dropped (and
	// logged); the child's output to Stdout and Stderr is never held back.
	Transcript io.Writer
	// Grace is how long Wait waits, after the child exited 0, for the other
	// processes of its group (its own children left running) to end before
	// it kills them and reports a *StragglersError; 0 means DefaultGrace
	// (10 s), a negative value looks once and does not wait.
	Grace time.Duration
	// DrainTimeout bounds the wait for the child's output after it exited;
	// 0 means 2 s.
	DrainTimeout time.Duration
	// Logger receives debug and warning lines; nil means no logging.
	Logger hclog.Logger
	// Interrupt, when not nil, is called each time the user types the
	// terminal's interrupt character (VINTR, usually Ctrl-C) while a
	// PTYRunner copies our raw terminal to the child: raw mode turns that key
	// into a byte, so no SIGINT reaches the wrapper. The byte is then not
	// passed on; the caller treats the call as SIGINT. nil passes it on to
	// the child's terminal.
	Interrupt func()
	// Started, when not nil, is called by Start once the child runs, with
	// its process id: the leader of the child's own process group and,
	// with session (a PTYRunner), of its own session. Where the system has
	// no process groups (Windows) it is not called.
	Started func(pid int, session bool)
}

// started calls Started, when it is set.
func (c Command) started(pid int, session bool) {
	if c.Started != nil {
		c.Started(pid, session)
	}
}

func (c Command) withDefaults() Command {
	if c.Stdin == nil {
		c.Stdin = os.Stdin
	}
	if c.Stdout == nil {
		c.Stdout = os.Stdout
	}
	if c.Stderr == nil {
		c.Stderr = os.Stderr
	}
	if c.Grace == 0 {
		c.Grace = DefaultGrace
	}
	if c.DrainTimeout == 0 {
		c.DrainTimeout = 2 * time.Second
	}
	if c.Logger == nil {
		c.Logger = hclog.NewNullLogger()
	}
	return c
}

// copyBufferSize is the chunk size of output copies: large enough that a
// child writing at full speed is not slowed by the wrapper in between.
const copyBufferSize = 256 << 10

// transcriptWriter serialises writes of several streams into one transcript
// and drops the transcript after its first error.
type transcriptWriter struct {
	mu  sync.Mutex
	w   io.Writer
	err error
	log hclog.Logger
}

func (t *transcriptWriter) write(p []byte) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.w == nil || t.err != nil {
		return
	}
	if _, err := t.w.Write(p); err != nil {
		t.err = err
		t.log.Warn("writing the transcript failed; the build output continues without it", "error", err)
	}
}

// teeWriter writes to dst and copies every byte to the transcript.
type teeWriter struct {
	dst io.Writer
	t   *transcriptWriter
}

func (w teeWriter) Write(p []byte) (int, error) {
	w.t.write(p)
	return w.dst.Write(p)
}

// pump copies src to dst with a large buffer until EOF or an error, and
// treats EIO (a pty whose other side is gone) as EOF. When writing to dst
// fails it keeps reading, so the child never blocks on a full pipe.
func pump(dst io.Writer, src io.Reader, log hclog.Logger) {
	buf := make([]byte, copyBufferSize)
	var werr error
	for {
		n, err := src.Read(buf)
		if n > 0 && werr == nil {
			if _, werr = dst.Write(buf[:n]); werr != nil {
				log.Warn("writing the build output failed; discarding the rest", "error", werr)
			}
		}
		if err != nil {
			if !errors.Is(err, io.EOF) && !isEIO(err) && !errors.Is(err, os.ErrClosed) {
				log.Debug("reading the build output ended", "error", err)
			}
			return
		}
	}
}

// cleanUpOnPanic, deferred in a goroutine, runs cleanup when that goroutine
// panics and then lets the panic go on. The process still crashes, as it
// should, but not with the user's terminal left raw or the command running:
// a panic outside the goroutine that called Run would otherwise skip every
// deferred restore.
func cleanUpOnPanic(cleanup func()) {
	if p := recover(); p != nil {
		cleanup()
		panic(p)
	}
}

// waitDone waits for done up to d and reports whether it closed.
func waitDone(done <-chan struct{}, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-done:
		return true
	case <-t.C:
		return false
	}
}

func isEIO(err error) bool { return errors.Is(err, syscall.EIO) }
