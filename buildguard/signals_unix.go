//go:build unix

package buildguard

import (
	"os"
	"os/signal"
	"syscall"
)

// notifySignals are the signals Run catches while it runs. SIGQUIT is one of
// the interrupting signals like the others (docs/decisions.md#D12); caught,
// it also never ends the wrapper with the Go runtime's goroutine dump.
var notifySignals = []os.Signal{syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP, syscall.SIGQUIT, syscall.SIGWINCH}

// caughtSignals are the notifySignals Run catches: all of them, except a
// SIGHUP that was ignored when the process started (nohup). Catching it would
// undo nohup for the build; left ignored, the command inherits the ignore as
// it would without the wrapper.
func caughtSignals() []os.Signal {
	var sigs []os.Signal
	for _, s := range notifySignals {
		if s == syscall.SIGHUP && signal.Ignored(s) {
			continue
		}
		sigs = append(sigs, s)
	}
	return sigs
}

// quietSignals are caught while Run runs (and after it, with KeepSignals)
// only so that they cannot end the wrapper mid-build: a closed stdout
// (SIGPIPE) must not abandon the hold and the child. Catching (unlike
// ignoring) is not inherited by the child, which keeps default dispositions.
var quietSignals = []os.Signal{syscall.SIGPIPE}

// terminateSignal is forwarded when Run's context ends the build.
const terminateSignal = syscall.SIGTERM

func isResize(s os.Signal) bool { return s == syscall.SIGWINCH }

// isInterrupt reports whether s interrupts the build: SIGINT, SIGTERM,
// SIGHUP or SIGQUIT (docs/decisions.md#D8, #D12).
func isInterrupt(s os.Signal) bool {
	return s == syscall.SIGINT || s == syscall.SIGTERM || s == syscall.SIGHUP || s == syscall.SIGQUIT
}

// DefaultRunner runs c on a pseudo-terminal when c.Stdout is a terminal, and
// with plain stdio otherwise.
func DefaultRunner(c Command) Runner {
	if IsTerminal(c.Stdout) {
		return NewPTYRunner(c)
	}
	return NewExecRunner(c)
}
