//go:build unix

package buildguard

import (
	"os"
	"syscall"
)

// notifySignals are the signals Run catches while it runs.
var notifySignals = []os.Signal{syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP, syscall.SIGWINCH}

// terminateSignal is forwarded when Run's context ends the build.
const terminateSignal = syscall.SIGTERM

func isResize(s os.Signal) bool { return s == syscall.SIGWINCH }

// DefaultRunner runs c on a pseudo-terminal when c.Stdout is a terminal, and
// with plain stdio otherwise.
func DefaultRunner(c Command) Runner {
	if IsTerminal(c.Stdout) {
		return NewPTYRunner(c)
	}
	return NewExecRunner(c)
}
