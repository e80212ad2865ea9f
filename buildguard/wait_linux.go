package buildguard

import (
	"errors"
	"unsafe"

	"github.com/buildguard/buildguard/internal/proc"
	"golang.org/x/sys/unix"
)

// childEvent is what waiting for the child reported: it exited (with its
// exit code, or 128+n when signal n ended it) or it stopped (with the
// signal that stopped it).
type childEvent struct {
	exited bool
	code   int
	stop   unix.Signal
}

// The si_code values of SIGCHLD (<asm-generic/siginfo.h>).
const (
	cldExited  = 1
	cldKilled  = 2
	cldDumped  = 3
	cldTrapped = 4
	cldStopped = 5
)

// sigchldStatus returns si_status of a SIGCHLD siginfo: the exit code or
// the signal. The union of siginfo_t starts after three int32 fields,
// aligned to a pointer; its SIGCHLD member starts with si_pid and si_uid.
func sigchldStatus(info *unix.Siginfo) int {
	const ptr = unsafe.Sizeof(uintptr(0))
	union := (12 + ptr - 1) &^ (ptr - 1)
	return int(*(*int32)(unsafe.Add(unsafe.Pointer(info), union+8)))
}

// waitEvent blocks until process pid has exited, or has stopped when
// stops is set, without collecting it: an exited child stays a zombie, so
// its id (and the id of its process group) cannot be handed to another
// process until the caller collects it. A stop is consumed (the next call waits for the next
// event). It reports false when it cannot wait that way.
func waitEvent(pid int, stops bool) (childEvent, bool) {
	opts := unix.WEXITED | unix.WNOWAIT
	if stops {
		opts |= unix.WSTOPPED
	}
	for {
		var info unix.Siginfo
		err := unix.Waitid(unix.P_PID, pid, &info, opts, nil)
		if errors.Is(err, unix.EINTR) {
			continue
		}
		if err != nil {
			return childEvent{}, false
		}
		status := sigchldStatus(&info)
		switch info.Code {
		case cldExited:
			return childEvent{exited: true, code: status}, true
		case cldKilled, cldDumped:
			return childEvent{exited: true, code: 128 + status}, true
		case cldStopped, cldTrapped:
			// Consume the stop, so that the next wait reports the next
			// event; WNOHANG: it was reported, it is there.
			var again unix.Siginfo
			_ = unix.Waitid(unix.P_PID, pid, &again, unix.WSTOPPED|unix.WNOHANG, nil)
			return childEvent{stop: unix.Signal(status)}, true
		}
		// CLD_CONTINUED is not asked for; anything else: wait again.
	}
}

// groupMembers returns how many processes of process group pgid still run
// (zombies do not). ok is false when this cannot be told (no /proc).
func groupMembers(pgid int) (n int, ok bool) {
	pids, err := proc.GroupMembers(pgid)
	if err != nil {
		return 0, false
	}
	return len(pids), true
}
