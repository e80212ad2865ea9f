package buildqueue

import (
	"errors"

	"golang.org/x/sys/unix"

	osproc "github.com/buildguard/buildguard/internal/proc"
)

// endProcess sends SIGKILL to p (signalProcess).
func endProcess(p osproc.Process) bool { return signalProcess(p, unix.SIGKILL) }

// signalProcess sends sig to p through a descriptor of the process
// itself, once it is known to be p (its start), so that a pid taken by
// another process meanwhile is never signalled. It reports whether the
// signal was sent.
func signalProcess(p osproc.Process, sig unix.Signal) bool {
	fd, err := unix.PidfdOpen(p.PID, 0)
	if errors.Is(err, unix.ENOSYS) {
		// A kernel before 5.3: by its id, a moment after the look.
		now, ok := osproc.Lookup(p.PID)
		return ok && now.Start == p.Start && unix.Kill(p.PID, sig) == nil
	}
	if err != nil {
		return false // gone: left to the wait
	}
	defer unix.Close(fd)
	if now, ok := osproc.Lookup(p.PID); !ok || now.Start != p.Start {
		return false
	}
	return unix.PidfdSendSignal(fd, sig, nil, 0) == nil
}
