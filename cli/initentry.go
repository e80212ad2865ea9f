package cli

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/buildguard/buildguard/service/safebuild"
)

// toolTimeoutMargin is what a host's tool timeout adds to the longest a
// build call of the project may take (docs/hosts.md#1): the termination
// grace of a cancelled or timed-out build (10 s), the acknowledgement of
// BUILD failed, the retries of a hold the agent still keeps (3 s), and the
// result.
const toolTimeoutMargin = time.Minute

// entryCommand returns the command an entry names (docs/hosts.md#1): the
// path buildguard was invoked by (arg0, found on PATH when it has no
// slash) when it leads to this very binary, so that a symlink an upgrade
// repoints (/usr/local/bin/buildguard, a Homebrew or asdf shim) keeps
// working; else the binary's real path.
func entryCommand(arg0 string) (string, error) {
	self, err := os.Executable()
	if err == nil {
		self, err = filepath.EvalSymlinks(self)
	}
	if err != nil {
		return "", err
	}
	invoked := arg0
	if !strings.ContainsRune(arg0, filepath.Separator) {
		if invoked, err = exec.LookPath(arg0); err != nil {
			return self, nil
		}
	}
	invoked, err = filepath.Abs(invoked)
	if err != nil {
		return self, nil
	}
	a, errA := os.Stat(invoked)
	b, errB := os.Stat(self)
	if errA != nil || errB != nil || !os.SameFile(a, b) {
		return self, nil
	}
	return invoked, nil
}

// buildCallTimeout returns the longest one reclazz_safe_build call of the
// project in dir may take (docs/hosts.md#1): for each build, its wait in
// the queue (queueTimeoutSeconds, default the build's timeout) plus its
// timeout (timeoutSeconds, default 600 s); the largest, plus
// toolTimeoutMargin. A project without builds counts the default; a
// .buildguard.json that cannot be read counts the default too, and why
// says so.
func buildCallTimeout(dir string) (d time.Duration, why string) {
	longest := 2 * safebuild.DefaultBuildTimeout
	p, err := safebuild.LoadProject(dir)
	switch {
	case errors.Is(err, safebuild.ErrNoBuild):
	case err != nil:
		why = fmt.Sprintf("the tool timeout counts the default build timeout, as %s cannot be used: %v", safebuild.ConfigFile, err)
	default:
		longest = 0
		for _, b := range p.Builds {
			wait := b.QueueTimeout
			if wait == 0 {
				wait = b.Timeout
			}
			longest = max(longest, wait+b.Timeout)
		}
	}
	return longest + toolTimeoutMargin, why
}
