package buildguard

import "syscall"

// dieWithParent makes the kernel send SIGKILL to the child when the wrapper
// dies without a chance to stop it (a SIGKILL of the wrapper): an orphaned
// build would otherwise keep compiling into held output. Both runners use
// it. Only the direct child receives it; under a pty the closing terminal
// also hangs up the rest of the child's session. What the child started
// and left running holds the project's turn: the next build waits for it
// and ends it (Config.Started, docs/decisions.md#D22).
func dieWithParent(a *syscall.SysProcAttr) { a.Pdeathsig = syscall.SIGKILL }
