//go:build unix

package hostconfig

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
)

// ownGroup makes cmd the leader of a new process group.
func ownGroup(cmd *exec.Cmd) { cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true} }

// killGroup sends SIGKILL to cmd's process group: the server and every
// process it started that stayed in the group.
func killGroup(cmd *exec.Cmd) {
	if cmd.Process != nil {
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	}
}

// hostLookPath finds command as a host's spawn does (execvp): a name
// without a slash in the directories of path, an empty or relative one
// taken from dir, the working directory the server starts in; the first
// regular file with an execute bit wins. A command with a slash is
// returned as it is (exec takes a relative one from dir).
func hostLookPath(command, path, dir string) (string, error) {
	if strings.Contains(command, "/") {
		return command, nil
	}
	for _, d := range filepath.SplitList(path) {
		if d == "" {
			d = "."
		}
		if !filepath.IsAbs(d) {
			d = filepath.Join(dir, d)
		}
		p := filepath.Join(d, command)
		if fi, err := os.Stat(p); err == nil && fi.Mode().IsRegular() && fi.Mode().Perm()&0o111 != 0 {
			return p, nil
		}
	}
	return "", exec.ErrNotFound
}
