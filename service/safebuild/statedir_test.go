package safebuild

import (
	"os"
	"time"
)

// openLogDir opens dir/.buildguard and its logs folder as a build does
// (openStateDir, ownDir.logs).
func openLogDir(dir string) (*ownDir, error) {
	state, err := openStateDir(dir)
	if err != nil {
		return nil, err
	}
	defer state.Close()
	return state.logs(LogDir(dir))
}

// createLog creates the log of one build of name started at t in the
// project dir, as a build does (newLog).
func createLog(dir, name string, t time.Time) (*os.File, error) {
	d, err := openLogDir(dir)
	if err != nil {
		return nil, err
	}
	defer d.Close()
	return newLog(d, name, t)
}
