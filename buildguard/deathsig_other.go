//go:build unix && !linux

package buildguard

import "syscall"

// dieWithParent has no portable equivalent outside Linux: there, a SIGKILL
// of the wrapper leaves a pipe-mode child running (a pty-mode child gets
// the hangup of its closed terminal).
func dieWithParent(*syscall.SysProcAttr) {}
