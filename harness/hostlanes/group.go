//go:build unix

package hostlanes

import (
	"os/exec"
	"syscall"
	"time"
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
