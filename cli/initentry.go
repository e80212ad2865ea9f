package cli

import (
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"time"

	"github.com/buildguard/buildguard/service/hostconfig"
	"github.com/buildguard/buildguard/service/safebuild"
)

// toolTimeoutMargin is what a host's tool timeout adds to the longest a
// build call of the project may take (docs/hosts.md#1): the termination
// grace of a cancelled or timed-out build (10 s), the acknowledgement of
// BUILD failed, the retries of a hold the agent still keeps (3 s), and the
// result.
const toolTimeoutMargin = time.Minute

// initEntries returns the entry each host gets (docs/hosts.md#1): a
// project-level host the portable entry, buildguard from PATH, unless
// --absolute; a user-level host this binary's path and --project-dir. A
// portable entry with no buildguard on PATH would not start, so the run is
// refused (exit 2) with what to do; a buildguard on PATH that is not this
// binary is a note.
func initEntries(o initOptions, env hostconfig.Env, hosts []hostconfig.Host, self string, stderr io.Writer) (map[string]hostconfig.Entry, ExitCode) {
	timeout, why := buildCallTimeout(env.ProjectDir)
	entries := map[string]hostconfig.Entry{}
	portable := false
	for _, h := range hosts {
		e := hostconfig.NewEntry(h, self, env.ProjectDir)
		if h.Scope == hostconfig.Project && !o.absolute {
			e, portable = hostconfig.PortableEntry(h), true
		}
		entries[h.Name] = e.WithToolTimeout(h, timeout)
		if h.TimeoutKey != "" && why != "" {
			fmt.Fprintf(stderr, "buildguard init: note: %s\n", why)
			why = ""
		}
	}
	if !portable {
		return entries, ExitOK
	}
	onPath, err := exec.LookPath(hostconfig.Command)
	if err == nil {
		onPath, err = filepath.Abs(onPath)
	}
	if err != nil {
		fmt.Fprintf(stderr, "buildguard init: %s is not on PATH (%s), so a host would not start the entry %q of the project's files. "+
			"Install buildguard in a directory on PATH (for example: ln -s %s /usr/local/bin/buildguard) and run init again, "+
			"or run buildguard init --absolute to write this machine's path %s (an entry for this machine only, not for committing)\n",
			hostconfig.Command, shortList(os.Getenv("PATH")), hostconfig.Command+" mcp", self, self)
		return nil, ExitUsage
	}
	a, errA := os.Stat(onPath)
	b, errB := os.Stat(self)
	if errA != nil || errB != nil || !os.SameFile(a, b) {
		fmt.Fprintf(stderr, "buildguard init: note: the project's entries start buildguard from PATH, which is %s, not this binary (%s)\n", onPath, self)
	}
	return entries, ExitOK
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
