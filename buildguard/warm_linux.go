package buildguard

import "os"

// warmStart does ahead of time the one-time work of a process's first child
// start. On Linux, Go checks once per process that pidfds work (pidfd_open,
// waitid, pidfd_send_signal and a probe clone) before its first start;
// os.FindProcess runs the same check. Run calls warmStart while the agent
// is being reached, so the check is not paid between the acknowledgement of
// the hold and the start of the build.
func warmStart() {
	if p, err := os.FindProcess(os.Getpid()); err == nil {
		_ = p.Release()
	}
}
