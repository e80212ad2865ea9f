package buildguard

import (
	"fmt"
	"os"
	"runtime"
	"sync"
	"syscall"
	"unsafe"

	"github.com/hashicorp/go-hclog"
	"golang.org/x/sys/unix"
	"golang.org/x/term"
)

// jobTerminal is the wrapper's controlling terminal while the build runs in
// pipe mode with that terminal on its stdin (docs/decisions.md#D12). The
// build runs in its own process group, and a process group reads and
// changes its controlling terminal only from the terminal's foreground, so
// the build is run the way a shell runs a job:
//   - started from the foreground, its group becomes the terminal's
//     foreground group, and the wrapper's group gets it back (with the
//     terminal's modes as they were) when the build ends, on every path;
//   - stopped by the terminal's suspend key (or any stop signal), the
//     terminal goes back to the wrapper's group and the wrapper's own job
//     stops too, so that the shell shows the job stopped; continued in the
//     foreground (fg), the build gets the terminal back and continues,
//     continued in the background (bg), it continues there;
//   - stopped for reading or changing the terminal from the background
//     (SIGTTIN, SIGTTOU), the build is given the terminal and continued when
//     the wrapper is in the foreground; otherwise the wrapper's job stops
//     with the same signal, as the shell shows a job waiting for the
//     terminal, and the build continues once the job is brought to the
//     foreground. Where nothing can bring it there (no job control), the
//     build is killed and fails with a message: it is never waited for
//     forever.
type jobTerminal struct {
	fd   int
	ours int // the wrapper's process group
	log  hclog.Logger

	mu    sync.Mutex
	child int           // the build's process group; 0 before start
	modes *unix.Termios // the terminal's modes when the build started
	given bool          // the terminal's foreground is the build's, by us
	// jobModes are the build's terminal modes, saved while it is stopped.
	jobModes *unix.Termios
}

// newJobTerminal returns the job terminal for the build's stdin f: nil
// unless f is the wrapper's controlling terminal.
func newJobTerminal(f *os.File, log hclog.Logger) *jobTerminal {
	fd := int(f.Fd())
	if !term.IsTerminal(fd) {
		return nil
	}
	// TIOCGPGRP answers only on the caller's controlling terminal.
	if _, err := unix.IoctlGetInt(fd, unix.TIOCGPGRP); err != nil {
		return nil
	}
	return &jobTerminal{fd: fd, ours: unix.Getpgrp(), log: log}
}

func (j *jobTerminal) foreground() int {
	fg, err := unix.IoctlGetInt(j.fd, unix.TIOCGPGRP)
	if err != nil {
		return -1
	}
	return fg
}

// inForeground reports whether the wrapper's group has the terminal.
func (j *jobTerminal) inForeground() bool { return j.foreground() == j.ours }

// prepare sets up the start of the build: from the foreground, the child
// puts its new group in the foreground itself, before it runs the command
// (SysProcAttr.Foreground), so that the build never reads the terminal
// from the background.
func (j *jobTerminal) prepare(a *syscall.SysProcAttr) {
	j.mu.Lock()
	defer j.mu.Unlock()
	if !j.inForeground() {
		return // started in the background: it stays there, like the wrapper
	}
	if t, err := unix.IoctlGetTermios(j.fd, unix.TCGETS); err == nil {
		j.modes = t
	}
	a.Foreground, a.Ctty = true, j.fd
	j.given = true
}

// started records the build's group; failed says Start failed, after the
// child may already have taken the foreground: it is taken back.
func (j *jobTerminal) started(pgid int, failed bool) {
	if j == nil {
		return
	}
	j.mu.Lock()
	defer j.mu.Unlock()
	if failed {
		j.takeLocked()
		return
	}
	j.child = pgid
}

// asForeground runs fn, which changes the terminal, with SIGTTOU blocked on
// its thread: a process group that is not the terminal's foreground may
// change it then (tcsetpgrp, tcsetattr) instead of being stopped.
func asForeground(fn func() error) error {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	var set, old unix.Sigset_t
	bits := uint(unsafe.Sizeof(set.Val[0]) * 8)
	n := uint(unix.SIGTTOU - 1)
	set.Val[n/bits] |= 1 << (n % bits)
	if err := unix.PthreadSigmask(unix.SIG_BLOCK, &set, &old); err != nil {
		return fmt.Errorf("blocking SIGTTOU: %w", err)
	}
	defer unix.PthreadSigmask(unix.SIG_SETMASK, &old, nil)
	return fn()
}

func (j *jobTerminal) setForeground(pgid int) error {
	return asForeground(func() error {
		return unix.IoctlSetPointerInt(j.fd, unix.TIOCSPGRP, pgid)
	})
}

func (j *jobTerminal) setModes(t *unix.Termios) error {
	return asForeground(func() error { return unix.IoctlSetTermios(j.fd, unix.TCSETS, t) })
}

// giveLocked hands the terminal to the build's group, with the build's modes
// when it had its own.
func (j *jobTerminal) giveLocked() {
	if j.child == 0 {
		return
	}
	if j.modes == nil { // started in the background: ours are the modes now
		if t, err := unix.IoctlGetTermios(j.fd, unix.TCGETS); err == nil {
			j.modes = t
		}
	}
	if j.jobModes != nil {
		if err := j.setModes(j.jobModes); err != nil {
			j.log.Debug("restoring the build's terminal modes failed", "error", err)
		}
		j.jobModes = nil
	}
	if err := j.setForeground(j.child); err != nil {
		j.log.Warn("giving the terminal to the build failed", "error", err)
		return
	}
	j.given = true
}

// takeLocked takes the terminal back from the build's group, saving the
// build's modes and restoring the wrapper's.
func (j *jobTerminal) takeLocked() {
	if !j.given {
		return
	}
	j.given = false
	if fg := j.foreground(); fg != j.ours {
		if err := j.setForeground(j.ours); err != nil {
			j.log.Warn("taking the terminal back from the build failed", "error", err)
			return
		}
	}
	if t, err := unix.IoctlGetTermios(j.fd, unix.TCGETS); err == nil && j.modes != nil && *t != *j.modes {
		j.jobModes = t
		if err := j.setModes(j.modes); err != nil {
			j.log.Warn("restoring the terminal's modes failed; run `stty sane`", "error", err)
		}
	}
}

// restore gives the terminal back to the wrapper's group, in the modes it
// had when the build started, if the build has it from us. It is
// idempotent and runs on every path that ends the build.
func (j *jobTerminal) restore() {
	if j == nil {
		return
	}
	j.mu.Lock()
	defer j.mu.Unlock()
	j.takeLocked()
	j.jobModes = nil
}

// stopped handles a stop of the build's leader by sig and returns once the
// build may go on (it was continued), or with an error when the build waits
// for the terminal and cannot be given it: the caller then ends the build.
func (j *jobTerminal) stopped(sig syscall.Signal, g *group) error {
	switch sig {
	case syscall.SIGTTIN, syscall.SIGTTOU:
		j.log.Debug("the build waits for the terminal", "signal", sig)
		if !j.inForeground() {
			// As the shell shows a job waiting for the terminal: stop the
			// wrapper's job until it is brought to the foreground.
			stoppedJob, err := stopJob(sig)
			if err != nil || !stoppedJob && !j.inForeground() {
				return &TerminalStopError{Signal: sig}
			}
			if !j.inForeground() {
				// Continued in the background (bg): the build goes on
				// there, and stops again if it still needs the terminal.
				return g.signal(syscall.SIGCONT)
			}
		}
		j.mu.Lock()
		j.giveLocked()
		j.mu.Unlock()
		return g.signal(syscall.SIGCONT)
	default: // SIGTSTP from the suspend key, or SIGSTOP: suspend the job
		j.log.Debug("the build was suspended; suspending the wrapper", "signal", sig)
		j.mu.Lock()
		j.takeLocked()
		j.mu.Unlock()
		if _, err := stopJob(syscall.SIGTSTP); err != nil {
			j.log.Warn("suspending the wrapper failed", "error", err)
		}
		// Continued, or never stopped (no job control): in the foreground
		// the build gets the terminal again; in the background it goes on
		// there.
		if j.inForeground() {
			j.mu.Lock()
			j.giveLocked()
			j.mu.Unlock()
		}
		return g.signal(syscall.SIGCONT)
	}
}

// inheritsTerminal reports whether a terminal on stdin is handed to the build.
const inheritsTerminal = true
