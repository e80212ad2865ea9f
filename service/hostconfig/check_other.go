//go:build !unix

package hostconfig

import (
	"os/exec"
	"strings"
)

// ownGroup does nothing where there are no Unix process groups.
func ownGroup(*exec.Cmd) {}

// killGroup kills the server process.
func killGroup(cmd *exec.Cmd) {
	if cmd.Process != nil {
		_ = cmd.Process.Kill()
	}
}

// hostLookPath finds command in this process's PATH (with PATHEXT where
// there is one); a command with a path separator is returned as it is.
func hostLookPath(command, _, _ string) (string, error) {
	if strings.ContainsAny(command, `/\`) {
		return command, nil
	}
	return exec.LookPath(command)
}
