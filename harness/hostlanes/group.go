//go:build unix

package hostlanes

import (
	"errors"
	"os/exec"
	"syscall"
	"time"

	"github.com/buildguard/buildguard/internal/testsupport/wait"
)

// waitDelay bounds the wait for a child's pipes after it was killed.
const waitDelay = 5 * time.Second

// group makes cmd the leader of a new process group that cancelling its
// context kills whole.
func group(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = waitDelay
}

// killGroup kills what is left of cmd's process group (the servers a host
// started and did not stop); a no-op before start or when it is empty.
func killGroup(cmd *exec.Cmd) {
	if cmd.Process != nil {
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	}
}

// settleGroup waits up to d for cmd's process group to empty by itself
// (a host's MCP server ends its builds and exits after the host closed its
// stdin), then kills what is left. It reports whether anything was left.
func settleGroup(cmd *exec.Cmd, d time.Duration) (left bool) {
	if cmd.Process == nil {
		return false
	}
	pgid := cmd.Process.Pid
	empty := func() bool { return errors.Is(syscall.Kill(-pgid, 0), syscall.ESRCH) }
	if wait.Until(d, empty) {
		return false
	}
	_ = syscall.Kill(-pgid, syscall.SIGKILL)
	return true
}
