package buildguard

import (
	"errors"
	"fmt"
	"os/exec"
	"runtime"
	"syscall"

	"golang.org/x/sys/unix"
)

// startHeld starts the build's command with start and calls ready with it
// after the command's exec and before it runs a single instruction of its
// own: the child calls ptrace(PTRACE_TRACEME) before its exec, so the
// kernel stops it at the exec, and it is let go (PTRACE_DETACH) once ready
// returned. A supervisor killed before ready returned takes the command
// with it (the stop's SIGTRAP, and Pdeathsig), before the command started
// anything: the record of its processes that ready writes can never be
// missing while any of them runs (docs/decisions.md#D22).
//
// With hold false, and where the stop would change what the command is
// (a set-user-ID or set-group-ID file, or one with file capabilities: the
// kernel does not raise the privileges of a traced exec), the child starts
// unheld. So it does where the kernel refuses the child's ptrace (Yama's
// ptrace_scope 3, a seccomp filter, or a tracer already on this process):
// a second command is built and started, unheld, as the first started
// nothing.
func startHeld(hold bool, build func() *exec.Cmd, start func(*exec.Cmd) error, ready func(*exec.Cmd), log interface{ Debug(string, ...any) }) (*exec.Cmd, error) {
	cmd := build()
	if !hold || !holdable(cmd.Path) {
		return startUnheld(cmd, start, ready)
	}
	// The tracer is a thread: the stop is reported to, and the detach
	// asked by, the thread that started the child.
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	cmd.SysProcAttr.Ptrace = true
	err := start(cmd)
	if errors.Is(err, syscall.EPERM) {
		log.Debug("the kernel refused to hold the build at its start; it starts unheld", "error", err)
		return startUnheld(build(), start, ready)
	}
	if err != nil {
		return nil, err
	}
	pid := cmd.Process.Pid
	if err := stopAtExec(pid); err != nil {
		_ = cmd.Process.Kill()
		_ = cmd.Process.Release()
		return nil, err
	}
	ready(cmd)
	if err := unix.PtraceDetach(pid); err != nil {
		// Only a SIGKILL of the child, meanwhile, stops a detach: it
		// runs nothing more.
		log.Debug("letting the held build go failed", "pid", pid, "error", err)
	}
	return cmd, nil
}

func startUnheld(cmd *exec.Cmd, start func(*exec.Cmd) error, ready func(*exec.Cmd)) (*exec.Cmd, error) {
	if err := start(cmd); err != nil {
		return nil, err
	}
	ready(cmd)
	return cmd, nil
}

// stopAtExec waits for the child's stop at its exec. The kernel stops it
// there before it returns to user space, so the wait is not bounded; a
// signal that reaches it first is passed on and the stop still comes.
func stopAtExec(pid int) error {
	for {
		var ws unix.WaitStatus
		_, err := unix.Wait4(pid, &ws, 0, nil)
		switch {
		case errors.Is(err, unix.EINTR):
			continue
		case err != nil:
			return fmt.Errorf("waiting for the build's command to start: %w", err)
		case !ws.Stopped():
			return fmt.Errorf("the build's command ended as it started (%s)", describeWait(ws))
		case ws.StopSignal() == unix.SIGTRAP:
			return nil
		}
		if err := unix.PtraceCont(pid, int(ws.StopSignal())); err != nil {
			return fmt.Errorf("waiting for the build's command to start: %w", err)
		}
	}
}

func describeWait(ws unix.WaitStatus) string {
	if ws.Signaled() {
		return "signal " + ws.Signal().String()
	}
	return fmt.Sprintf("exit %d", ws.ExitStatus())
}

// holdable reports whether a traced exec of path runs what an untraced
// one would: not for a set-user-ID or set-group-ID file, nor one with file
// capabilities. A path that cannot be looked at is held: its exec fails
// alike either way.
func holdable(path string) bool {
	var st unix.Stat_t
	if err := unix.Stat(path, &st); err != nil {
		return true
	}
	if st.Mode&(unix.S_ISUID|unix.S_ISGID) != 0 {
		return false
	}
	_, err := unix.Getxattr(path, "security.capability", nil)
	return err != nil
}
