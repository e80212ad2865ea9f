//go:build unix

package buildguard

import (
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"sync"
	"syscall"
	"time"

	"github.com/creack/pty"
	"golang.org/x/sys/unix"
	"golang.org/x/term"
)

// PTYRunner runs the child as the leader of a new session on a
// pseudo-terminal, so that it sees a terminal: colours and progress bars
// survive. Our stdin, when it is a terminal, is put in raw mode and copied
// to the child, except two keys our terminal would have turned into signals:
// the interrupt key goes to Command.Interrupt when it is set, and the
// suspend key suspends the child and the wrapper's job (see suspend). The
// child's size follows ours; the child's stdout and stderr arrive merged on
// Stdout, as a terminal shows them. Close restores our terminal.
type PTYRunner struct {
	c     Command
	group // Signal and Kill of the Runner
	tw    *transcriptWriter
	pt    *os.File // the pty's controlling side, non-blocking (closing it ends reads)
	in    *stdinCopier
	out   chan struct{} // closed when the child's output ended

	termMu    sync.Mutex
	termFd    int
	termState *term.State // non-nil while our stdin is in raw mode
	// rawWanted: our stdin is to be raw whenever we are in its foreground,
	// from Start until the build's end.
	rawWanted bool
	stopCont  func()        // stops watchContinue
	kick      chan struct{} // asks watchContinue to look again
	closeOnce sync.Once
}

// NewPTYRunner returns a Runner for c on a pseudo-terminal.
func NewPTYRunner(c Command) *PTYRunner {
	c = c.withDefaults()
	return &PTYRunner{c: c, tw: &transcriptWriter{w: c.Transcript, log: c.Logger}}
}

// terminalFile returns w as a file when it is a terminal.
func terminalFile(w any) (*os.File, bool) {
	f, ok := w.(*os.File)
	if !ok || !term.IsTerminal(int(f.Fd())) {
		return nil, false
	}
	return f, true
}

// IsTerminal reports whether w is a terminal; the wrapper chooses a PTYRunner
// when its stdout is one.
func IsTerminal(w any) bool {
	_, ok := terminalFile(w)
	return ok
}

func (r *PTYRunner) size() *pty.Winsize {
	if f, ok := terminalFile(r.c.Stdout); ok {
		if ws, err := pty.GetsizeFull(f); err == nil && ws.Rows > 0 && ws.Cols > 0 {
			return ws
		}
	}
	return &pty.Winsize{Rows: 24, Cols: 80}
}

// Start implements Runner.
func (r *PTYRunner) Start() error {
	if len(r.c.Argv) == 0 {
		return fmt.Errorf("%w: no command given", ErrCannotRun)
	}
	build := func() *exec.Cmd {
		cmd := exec.Command(r.c.Argv[0], r.c.Argv[1:]...)
		cmd.Dir, cmd.Env = r.c.Dir, r.c.Env
		// pty adds Setsid and Setctty; the kernel kills the child if we
		// die.
		cmd.SysProcAttr = &syscall.SysProcAttr{}
		dieWithParent(cmd.SysProcAttr)
		return cmd
	}
	// Resolve the executable first, so that a missing command is reported
	// before our terminal changes.
	if err := build().Err; err != nil {
		return fmt.Errorf("%w: %w", ErrCannotRun, err)
	}
	// Our terminal is raw before the child exists, so that the build never
	// runs under a terminal that still processes its output or turns a key
	// into a signal for the wrapper. When the start fails, Close restores
	// the terminal.
	keys, raw := r.makeRaw()

	var ptmx *os.File
	start := func(cmd *exec.Cmd) (err error) {
		ptmx, err = pty.StartWithSize(cmd, r.size())
		return err
	}
	cmd, err := startHeld(r.c.Started != nil, build, start, func(cmd *exec.Cmd) {
		r.group.started(cmd)
		r.c.started(cmd.Process.Pid, true)
	}, r.c.Logger)
	if err != nil {
		if ptmx != nil {
			// Started, then ended before its exec's stop was seen.
			ptmx.Close()
		}
		return fmt.Errorf("%w: %w", ErrCannotRun, err)
	}
	r.c.Logger.Debug("build started", "pid", cmd.Process.Pid, "mode", "pty")

	// ptmx was put in blocking mode by the ioctls of Start; a non-blocking
	// duplicate is served by the runtime poller, so Close ends its reads.
	pt, err := nonBlockingDup(ptmx)
	ptmx.Close()
	if err != nil {
		_ = r.group.signal(syscall.SIGKILL)
		_, _, _ = r.group.wait(-1)
		return fmt.Errorf("%w: %w", ErrCannotRun, err)
	}
	r.pt = pt

	var w io.Writer = r.c.Stdout
	if r.c.Transcript != nil {
		w = teeWriter{dst: r.c.Stdout, t: r.tw}
	}
	r.out = make(chan struct{})
	go func() {
		defer close(r.out)
		defer cleanUpOnPanic(r.abandon)
		pump(w, pt, r.c.Logger)
	}()
	in := inputCopy{keys: keys, onPanic: r.abandon, log: r.c.Logger}
	if raw {
		in.mayRead = r.inForeground
	}
	r.in = startStdinCopier(r.c.Stdin, pt, in)
	return nil
}

// makeRaw puts our terminal, when stdin is one, in raw mode. In raw mode
// it no longer turns its interrupt and suspend characters into signals:
// the input copy acts on the keys it returns instead. raw says whether the
// terminal is raw.
func (r *PTYRunner) makeRaw() (keys map[byte]func(), raw bool) {
	f, ok := terminalFile(r.c.Stdin)
	if !ok {
		return nil, false
	}
	r.termMu.Lock()
	defer r.termMu.Unlock()
	r.termFd = int(f.Fd())
	t, terr := unix.IoctlGetTermios(r.termFd, ioctlGetTermios)
	st, err := term.MakeRaw(r.termFd)
	if err != nil {
		r.c.Logger.Warn("cannot put the terminal in raw mode; input is line-buffered", "error", err)
		return nil, false
	}
	r.termState, r.rawWanted = st, true
	r.watchContinue()
	if terr == nil && t.Lflag&unix.ISIG != 0 {
		keys = map[byte]func(){}
		if c := t.Cc[unix.VINTR]; c != 0 && r.c.Interrupt != nil {
			keys[c] = r.c.Interrupt
		}
		if c := t.Cc[unix.VSUSP]; c != 0 {
			keys[c] = r.suspend
		}
	}
	return keys, true
}

func nonBlockingDup(f *os.File) (*os.File, error) {
	fd, err := unix.Dup(int(f.Fd()))
	if err != nil {
		return nil, fmt.Errorf("duplicating the pty: %w", err)
	}
	unix.CloseOnExec(fd)
	if err := unix.SetNonblock(fd, true); err != nil {
		unix.Close(fd)
		return nil, fmt.Errorf("making the pty non-blocking: %w", err)
	}
	return os.NewFile(uintptr(fd), f.Name()), nil
}

// Wait implements Runner.
func (r *PTYRunner) Wait() (int, error) {
	code, left, err := r.group.wait(r.c.Grace)
	if err != nil {
		return 0, err
	}
	if r.out != nil && !waitDone(r.out, r.c.DrainTimeout) {
		r.c.Logger.Warn("the build's terminal output did not end after it exited; some of it may be lost", "timeout", r.c.DrainTimeout)
	}
	r.restoreTerminal()
	return code, stragglers(left)
}

// Resize implements Runner: the child's terminal takes the size of ours.
func (r *PTYRunner) Resize() error {
	if r.pt == nil {
		return nil
	}
	ws := r.size()
	sc, err := r.pt.SyscallConn()
	if err != nil {
		return fmt.Errorf("resizing the build's terminal: %w", err)
	}
	var ierr error
	if err := sc.Control(func(fd uintptr) {
		ierr = unix.IoctlSetWinsize(int(fd), unix.TIOCSWINSZ, &unix.Winsize{Row: ws.Rows, Col: ws.Cols, Xpixel: ws.X, Ypixel: ws.Y})
	}); err != nil {
		return fmt.Errorf("resizing the build's terminal: %w", err)
	}
	if ierr != nil {
		return fmt.Errorf("resizing the build's terminal: %w", ierr)
	}
	return nil
}

// Close implements Runner: it kills the child's group if it still runs,
// stops copying input, closes the pty and restores our terminal.
func (r *PTYRunner) Close() error {
	r.closeOnce.Do(func() {
		_ = r.Kill()
		r.in.stop()
		if r.stopCont != nil {
			r.stopCont()
		}
		if r.pt != nil {
			if err := r.pt.Close(); err != nil && !errors.Is(err, os.ErrClosed) {
				r.c.Logger.Debug("closing the pty", "error", err)
			}
		}
		r.restoreTerminal()
	})
	return nil
}

// suspend does for the suspend key typed on our raw terminal (VSUSP, usually
// Ctrl-Z) what the terminal does for a job without the wrapper: the build
// stops, and so does the wrapper's job, which hands the terminal back to the
// shell in its own mode. When the shell continues the job in the
// foreground, the terminal is raw again, the child's terminal takes its
// size, and the build goes on; continued in the background (bg), the build
// goes on and the terminal stays as the shell has it until fg. The child is
// stopped with SIGSTOP: it leads its own session, an orphaned process group,
// in which the kernel ignores SIGTSTP. Outside job control (no shell to stop
// for) the wrapper's own stop is ignored the same way, and the build goes on
// at once.
func (r *PTYRunner) suspend() {
	r.termMu.Lock()
	if r.termState == nil { // closing, or not raw
		r.termMu.Unlock()
		return
	}
	_ = r.group.signal(syscall.SIGSTOP)
	if err := term.Restore(r.termFd, r.termState); err != nil {
		r.c.Logger.Warn("restoring the terminal before suspending failed", "error", err)
	}
	r.termState = nil
	r.termMu.Unlock()

	r.c.Logger.Debug("suspending the build and the wrapper")
	if _, err := stopJob(unix.SIGTSTP); err != nil {
		r.c.Logger.Warn("suspending the wrapper failed", "error", err)
	}
	// Continued (or never stopped).
	if !r.rawAgain() {
		select {
		case r.kick <- struct{}{}: // watch for the foreground
		default:
		}
	}
	if err := r.Resize(); err != nil {
		r.c.Logger.Debug("resizing the build's terminal failed", "error", err)
	}
	_ = r.group.signal(syscall.SIGCONT)
}

// foregroundPoll is how often a wrapper continued in the background looks
// whether it is in the foreground again: a shell's fg of a running job sends
// no signal.
const foregroundPoll = 200 * time.Millisecond

// watchContinue makes the terminal raw again once the wrapper is back in its
// foreground after a stop: continued there (SIGCONT), or continued in the
// background (bg) and later brought to the foreground (fg), which it finds
// by looking every foregroundPoll while it is in the background.
func (r *PTYRunner) watchContinue() {
	cont := make(chan os.Signal, 1)
	signal.Notify(cont, unix.SIGCONT)
	r.kick = make(chan struct{}, 1)
	done := make(chan struct{})
	go func() {
		defer cleanUpOnPanic(r.abandon)
		var ticker *time.Ticker
		var poll <-chan time.Time // set while in the background
		defer func() {
			if ticker != nil {
				ticker.Stop()
			}
		}()
		for {
			select {
			case <-cont:
			case <-r.kick:
			case <-poll:
			case <-done:
				return
			}
			switch settled := r.rawAgain(); {
			case settled && ticker != nil:
				ticker.Stop()
				ticker, poll = nil, nil
			case !settled && ticker == nil:
				ticker = time.NewTicker(foregroundPoll)
				poll = ticker.C
			}
		}
	}()
	r.stopCont = func() {
		signal.Stop(cont)
		close(done)
	}
}

// rawAgain puts our terminal back in raw mode when it should be raw, is not,
// and we are in its foreground. From the background a change would stop the
// wrapper (SIGTTOU), so the terminal stays as the shell has it. It reports
// whether there is nothing left to do: false only while the terminal should
// be raw and the wrapper is in the background.
func (r *PTYRunner) rawAgain() bool {
	r.termMu.Lock()
	defer r.termMu.Unlock()
	if !r.rawWanted || r.termState != nil {
		return true
	}
	if !r.inForeground() {
		return false
	}
	st, err := term.MakeRaw(r.termFd)
	if err != nil {
		r.c.Logger.Warn("cannot put the terminal back in raw mode; input is line-buffered", "error", err)
		return true
	}
	r.termState = st
	return true
}

// inForeground reports whether the wrapper's process group is the foreground
// of our terminal (stdin), or it cannot tell.
func (r *PTYRunner) inForeground() bool {
	fg, err := unix.IoctlGetInt(r.termFd, unix.TIOCGPGRP)
	return err != nil || fg == unix.Getpgrp()
}

// abandon restores our terminal and kills the child's group, for a panic in
// one of the goroutines that copy to and from the child.
func (r *PTYRunner) abandon() {
	r.restoreTerminal()
	_ = r.Kill()
}

func (r *PTYRunner) restoreTerminal() {
	r.termMu.Lock()
	defer r.termMu.Unlock()
	r.rawWanted = false
	if r.termState == nil {
		return
	}
	if err := term.Restore(r.termFd, r.termState); err != nil {
		r.c.Logger.Warn("restoring the terminal failed; run `stty sane`", "error", err)
	}
	r.termState = nil
}
