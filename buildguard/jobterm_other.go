//go:build unix && !linux

package buildguard

import (
	"os"
	"syscall"

	"github.com/hashicorp/go-hclog"
)

// jobTerminal hands the terminal to the build on Linux (see
// jobterm_linux.go). Elsewhere stops cannot be watched without collecting
// the child, so there is none: a terminal on stdin is not handed to a build
// in its own process group (it would be stopped for reading it), which
// reads /dev/null instead.
type jobTerminal struct{}

func newJobTerminal(*os.File, hclog.Logger) *jobTerminal        { return nil }
func (*jobTerminal) prepare(*syscall.SysProcAttr)               {}
func (*jobTerminal) started(int, bool)                          {}
func (*jobTerminal) restore()                                   {}
func (*jobTerminal) stopped(sig syscall.Signal, g *group) error { return nil }

// inheritsTerminal reports whether a terminal on stdin is handed to the build.
const inheritsTerminal = false
