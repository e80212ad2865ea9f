package buildguard

import (
	"errors"

	"golang.org/x/sys/unix"
)

// waitExited blocks until process pid has exited without collecting it, and
// reports whether it could wait that way.
func waitExited(pid int) bool {
	var info unix.Siginfo
	for {
		err := unix.Waitid(unix.P_PID, pid, &info, unix.WEXITED|unix.WNOWAIT, nil)
		if err == nil {
			return true
		}
		if !errors.Is(err, unix.EINTR) {
			return false
		}
	}
}
