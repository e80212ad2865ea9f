//go:build unix

package buildguard

import (
	"os"
	"os/signal"
	"time"

	"golang.org/x/sys/unix"
)

// stopWait bounds how long stopJob waits to be stopped and continued.
const stopWait = time.Second

// stopJob stops the wrapper's job with sig (SIGTSTP as the terminal's
// suspend key would have, SIGTTIN or SIGTTOU as the kernel would for a read
// or a change of the terminal from the background), and returns once the
// job is continued, reporting whether it was stopped at all. The stop is
// asynchronous (another thread may take the signal while this one goes on),
// so the SIGCONT is what says it happened. The kernel ignores the stop of a
// process group without a job-control shell above it (an orphaned group);
// no SIGCONT comes then, and stopJob returns false after stopWait.
func stopJob(sig unix.Signal) (bool, error) {
	cont := make(chan os.Signal, 1)
	signal.Notify(cont, unix.SIGCONT)
	defer signal.Stop(cont)
	if err := unix.Kill(0, sig); err != nil {
		return false, err
	}
	t := time.NewTimer(stopWait)
	defer t.Stop()
	select {
	case <-cont:
		return true, nil
	case <-t.C:
	}
	// Stopped for longer than stopWait, the timer and the SIGCONT are both
	// due at the continue; the signal may arrive a moment later.
	late := time.NewTimer(contLag)
	defer late.Stop()
	select {
	case <-cont:
		return true, nil
	case <-late.C:
		return false, nil
	}
}

// contLag bounds how long after the timer of stopJob a SIGCONT that was due
// with it may take to arrive.
const contLag = 100 * time.Millisecond
