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

// stopJob stops the wrapper's job, as the terminal's suspend key would have,
// and returns once the job is continued. The stop is asynchronous (another
// thread may take the signal while this one goes on), so the SIGCONT is what
// says it happened. The kernel ignores the stop of a process group without a
// job-control shell above it; no SIGCONT comes then, and stopJob returns
// after stopWait.
func stopJob() error {
	cont := make(chan os.Signal, 1)
	signal.Notify(cont, unix.SIGCONT)
	defer signal.Stop(cont)
	if err := unix.Kill(0, unix.SIGTSTP); err != nil {
		return err
	}
	t := time.NewTimer(stopWait)
	defer t.Stop()
	select {
	case <-cont:
	case <-t.C:
	}
	return nil
}
