package safebuild

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"sync"
	"time"
)

// StateDir is the directory under the project where buildguard keeps its
// own files: the build logs and the project's owner token
// (docs/safe-build.md#9). It holds a .gitignore of "*" when buildguard
// created it (stateignore.Create).
const StateDir = ".buildguard"

// KeptLogs is how many build logs are kept; older ones are removed when a
// build starts.
const KeptLogs = 10

// logName is the name of a build log: the UTC start time, then the build.
var logName = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`^[0-9]{8}T[0-9]{9}Z(-[0-9]+)?-[A-Za-z0-9][A-Za-z0-9_.-]{0,63}\.log$`)
})

// LogDir is where the logs of the project in dir are kept.
func LogDir(dir string) string { return filepath.Join(dir, StateDir, "logs") }

// createLog creates the log of one build of name started at t, named so that
// logs sort by start time, and removes all but the newest KeptLogs logs
// (this one included). The state directory and its logs folder must be real
// directories of this user; they are opened once without following a
// symlink (openLogDir), and the log is created and old logs removed
// through that handle, so nothing is created or removed outside the
// project even if a folder is swapped for a symlink meanwhile. Only files
// the product wrote are ever removed.
func createLog(dir, name string, t time.Time) (*os.File, error) {
	d, err := openLogDir(dir)
	if err != nil {
		return nil, err
	}
	defer d.Close()
	stamp := t.UTC().Format("20060102T150405.000Z")
	stamp = stamp[:15] + stamp[16:] // no dot: 20261202T010203456Z
	var f *os.File
	for i := 0; i < 100; i++ {
		base := stamp + "-" + name + ".log"
		if i > 0 {
			base = fmt.Sprintf("%s-%d-%s.log", stamp, i, name)
		}
		f, err = d.create(base)
		if !errors.Is(err, os.ErrExist) {
			break
		}
	}
	if err != nil {
		return nil, fmt.Errorf("creating the build log in %s: %w", d.path, err)
	}
	rotateLogs(d, filepath.Base(f.Name()))
	return f, nil
}

// rotateLogs removes the oldest build logs in d beyond KeptLogs, never the
// one just created (whatever the clock said). A build log is a file the
// product wrote: a log's name, a regular file (not a symlink) of this
// user; nothing else is ever removed. Failures leave a log behind and are
// not errors of the build.
func rotateLogs(d *logDir, current string) {
	names, err := d.names()
	if err != nil {
		return
	}
	var logs []string
	for _, n := range names {
		if n == current || !logName().MatchString(n) {
			continue
		}
		if fi, err := d.lstat(n); err != nil || checkOwn(n, fi, false) != nil {
			continue
		}
		logs = append(logs, n)
	}
	sort.Strings(logs)
	for len(logs) > KeptLogs-1 {
		_ = d.remove(logs[0])
		logs = logs[1:]
	}
}
