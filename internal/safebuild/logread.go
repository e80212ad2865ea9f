package safebuild

import (
	"errors"
	"fmt"
	"io"
	"path/filepath"
)

// MaxLogRead is the most bytes ReadLog returns: a build log read back
// through MCP resources/read (docs/safe-build.md#12).
const MaxLogRead = 8 << 20

// ErrNotALog means a path given to ReadLog is not a build log buildguard
// wrote: not named as one, not beneath a project's .buildguard/logs/,
// reached through a link, a file with a second hard link, not a regular
// file, or another user's (docs/decisions.md#D23).
var ErrNotALog = errors.New("not a build log")

// ErrLogTooLarge means a build log is larger than MaxLogRead.
var ErrLogTooLarge = errors.New("build log too large")

// ReadLog reads the build log at path, which must be absolute and clean,
// named as a build log (docs/safe-build.md#9), in the logs directory of a
// project's state directory, and at most MaxLogRead bytes. The file is
// opened beneath the project without following a link at any step
// (openLogBeneath); .buildguard, logs and the file must be of this user,
// the file a regular file with no other hard link.
func ReadLog(path string) ([]byte, error) {
	if !filepath.IsAbs(path) || filepath.Clean(path) != path {
		return nil, fmt.Errorf("%w: %s is not a clean absolute path", ErrNotALog, path)
	}
	logs := filepath.Dir(path)
	state := filepath.Dir(logs)
	if !logName().MatchString(filepath.Base(path)) || filepath.Base(logs) != "logs" || filepath.Base(state) != StateDir {
		return nil, fmt.Errorf("%w: %s is not <project>/%s/logs/<build log>", ErrNotALog, path, StateDir)
	}
	f, err := openLogBeneath(filepath.Dir(state), filepath.Base(path))
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrNotALog, err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err == nil {
		err = checkOwn(path, fi, false)
	}
	if err == nil && linkCount(f, fi) != 1 {
		err = fmt.Errorf("%s has another hard link: a build log has one name only", path)
	}
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrNotALog, err)
	}
	if fi.Size() > MaxLogRead {
		return nil, fmt.Errorf("%w: %s has %d bytes, more than the %d a read returns; open the file itself", ErrLogTooLarge, path, fi.Size(), MaxLogRead)
	}
	data, err := io.ReadAll(io.LimitReader(f, MaxLogRead+1))
	if err != nil {
		return nil, fmt.Errorf("reading %s: %w", path, err)
	}
	if len(data) > MaxLogRead {
		return nil, fmt.Errorf("%w: %s grew past %d bytes while read; open the file itself", ErrLogTooLarge, path, MaxLogRead)
	}
	return data, nil
}
