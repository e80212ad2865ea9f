package cli

import (
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"

	"github.com/buildguard/buildguard/internal/hostconfig"
)

// initEntries returns the entry each host gets (docs/hosts.md#1): a
// project-level host the portable entry, buildguard from PATH, unless
// --absolute; a user-level host this binary's path and --project-dir. A
// portable entry with no buildguard on PATH would not start, so the run is
// refused (exit 2) with what to do; a buildguard on PATH that is not this
// binary is a note.
func initEntries(o initOptions, env hostconfig.Env, hosts []hostconfig.Host, self string, stderr io.Writer) (map[string]hostconfig.Entry, ExitCode) {
	entries := map[string]hostconfig.Entry{}
	portable := false
	for _, h := range hosts {
		e := hostconfig.NewEntry(h, self, env.ProjectDir)
		if h.Scope == hostconfig.Project && !o.absolute {
			e, portable = hostconfig.PortableEntry(h), true
		}
		entries[h.Name] = e
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
