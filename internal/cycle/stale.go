package cycle

import (
	"os"
	"path/filepath"
	"strings"

	"github.com/hashicorp/go-hclog"
)

// dirPrefix begins the name of every channel directory Open creates.
const dirPrefix = "buildguard-cycles-"

// lockName is the file in a channel directory that the run which created
// the directory keeps locked (open, on Windows) for as long as it lives:
// the operating system lets go of it when the process ends, however it
// ends (docs/decisions.md#D20).
const lockName = "alive.lock"

// removeStale removes the channel directories in tempDir whose runs are
// proven dead: a directory of this user, not a link, whose lock file the
// run no longer holds. Only the files Open writes and then the directory
// are removed; a directory someone else added to stays. A run killed with
// SIGKILL leaves its directory, and with it its secret, to this.
func removeStale(tempDir string, log hclog.Logger) {
	if tempDir == "" {
		tempDir = os.TempDir()
	}
	entries, err := os.ReadDir(tempDir)
	if err != nil {
		log.Debug("looking for the cycle channels of ended runs failed", "dir", tempDir, "error", err)
		return
	}
	for _, e := range entries {
		if !e.IsDir() || !strings.HasPrefix(e.Name(), dirPrefix) {
			continue
		}
		dir := filepath.Join(tempDir, e.Name())
		release, dead := claimDead(dir)
		if !dead {
			continue
		}
		for _, name := range []string{scriptName, channelName, lockName} {
			os.Remove(filepath.Join(dir, name))
		}
		release()
		if err := os.Remove(dir); err != nil {
			log.Debug("removing the cycle channel of an ended run failed", "dir", dir, "error", err)
			continue
		}
		log.Debug("removed the cycle channel of a run that ended without closing it", "dir", dir)
	}
}
