package safebuild

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"sync"
	"time"

	"github.com/buildguard/buildguard/agentproto"
	"github.com/buildguard/buildguard/buildguard"
)

// The project's state directory (docs/safe-build.md#9): the owner file of
// its safe builds and their logs, never used through a symlink, nothing
// removed that buildguard did not write. The directory is opened, and
// its files created, read and removed, by the system's calls: relative to
// the opened directory in statedir_unix.go, by path in statedir_other.go.

// StateDir is the directory under the project where buildguard keeps its
// own files: the build logs and the project's owner token
// (docs/safe-build.md#9). It holds a .gitignore of "*" when buildguard
// created it (stateignore.Create).
const StateDir = ".buildguard"

// ErrStateDir means the project's state directory (StateDir) or something
// in it that buildguard writes is not what buildguard made: a symlink, not a
// directory (or not a regular file), or another user's. Nothing is written
// or removed through it (docs/safe-build.md#9).
var ErrStateDir = errors.New("unusable state directory")

// checkOwn refuses what buildguard would not have made at path: a
// symlink, the wrong kind of file, or another user's file.
func checkOwn(path string, fi fs.FileInfo, dir bool) error {
	const fix = "buildguard keeps its owner file and build logs only in a real directory of the project, never through a link: remove it and build again"
	switch {
	case fi.Mode()&fs.ModeSymlink != 0:
		return fmt.Errorf("%w: %s is a symlink; %s", ErrStateDir, path, fix)
	case dir && !fi.IsDir():
		return fmt.Errorf("%w: %s is not a directory; %s", ErrStateDir, path, fix)
	case !dir && !fi.Mode().IsRegular():
		return fmt.Errorf("%w: %s is not a regular file; %s", ErrStateDir, path, fix)
	case !ownedByUs(fi):
		return fmt.Errorf("%w: %s belongs to another user; %s", ErrStateDir, path, fix)
	}
	return nil
}

// OwnerFile is where a project keeps the owner token of its safe builds,
// under StateDir (docs/safe-build.md#4). Every safe build of the project,
// from the MCP server or the CLI, uses this one owner, so a failed build's
// hold is released by the project's next successful build.
const OwnerFile = "owner"

// errOwnerFile means the owner file exists but cannot be used.
var errOwnerFile = errors.New("unusable owner file")

// readyState takes from the project's state directory what a build that
// has its turn needs, in one pass through the directory opened once
// (openStateDir): the project's owner token (ownerIn), then a new log in the
// logs folder opened through it, and the old logs rotated (newLog). An
// error about the log is a *logError; any other is about the owner.
func readyState(dir, name string, t time.Time) (owner string, log *os.File, err error) {
	state, err := openStateDir(dir)
	if err != nil {
		return "", nil, err
	}
	defer state.Close()
	if owner, err = ownerIn(state); err != nil {
		return "", nil, err
	}
	logs, err := state.logs(LogDir(dir))
	if err == nil {
		defer logs.Close()
		log, err = newLog(logs, name, t)
	}
	if err != nil {
		return "", nil, &logError{err}
	}
	return owner, log, nil
}

// logError is a failure to create a build's log, its owner being ready.
type logError struct{ err error }

func (e *logError) Error() string { return e.err.Error() }
func (e *logError) Unwrap() error { return e.err }

// projectOwner returns the project's owner token (ownerIn) from its state
// directory, opened and checked as the logs are (openStateDir).
func projectOwner(dir string) (string, error) {
	state, err := openStateDir(dir)
	if err != nil {
		return "", err
	}
	defer state.Close()
	return ownerIn(state)
}

// ownerIn returns the project's owner token from its opened state
// directory, creating it (a fresh UUID, written atomically) on first use:
// nothing is read or written through a symlink. The owner file is read
// at most twice: once, and again after a fresh token was linked in when
// it was missing.
func ownerIn(state *ownDir) (owner string, err error) {
	for linked := false; ; linked = true {
		owner, err = readOwner(state)
		if linked || !errors.Is(err, os.ErrNotExist) {
			return owner, err
		}
		if owner, err = buildguard.NewOwner(""); err != nil {
			return "", err
		}
		// Linked in, not renamed: when another build created the file
		// meanwhile, its owner wins and is read back.
		if err := state.linkNew(OwnerFile, []byte(owner+"\n")); err != nil && !errors.Is(err, os.ErrExist) {
			return "", fmt.Errorf("writing the owner file: %w", err)
		}
	}
}

// readOwner reads the owner file of state: a regular file of this user,
// not a symlink, holding one owner token.
func readOwner(state *ownDir) (string, error) {
	path := filepath.Join(state.path, OwnerFile)
	f, err := state.open(OwnerFile)
	if err != nil {
		if fi, lerr := os.Lstat(path); lerr == nil {
			if cerr := checkOwn(path, fi, false); cerr != nil {
				return "", fmt.Errorf("%w: %w", errOwnerFile, cerr)
			}
		}
		if errors.Is(err, os.ErrNotExist) {
			return "", err
		}
		return "", fmt.Errorf("%w: %w", errOwnerFile, err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err == nil {
		err = checkOwn(path, fi, false)
	}
	if err != nil {
		return "", fmt.Errorf("%w: %w", errOwnerFile, err)
	}
	if fi.Size() > 1024 {
		return "", fmt.Errorf("%w: %s is not a small regular file; remove it (a build that failed under its owner then stays held until the application restarts)", errOwnerFile, path)
	}
	data, err := io.ReadAll(io.LimitReader(f, 1025))
	if err != nil {
		return "", fmt.Errorf("%w: %w", errOwnerFile, err)
	}
	owner := string(bytes.TrimSpace(data))
	if !agentproto.ValidToken(owner) {
		return "", fmt.Errorf("%w: %s does not hold an owner token (1-64 ASCII letters, digits, _ or -); remove it to start with a fresh one", errOwnerFile, path)
	}
	return owner, nil
}

// KeptLogs is how many build logs are kept; older ones are removed when a
// build starts.
const KeptLogs = 10

// logName is the name of a build log: the UTC start time, then the build.
var logName = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`^[0-9]{8}T[0-9]{9}Z(-[0-9]+)?-[A-Za-z0-9][A-Za-z0-9_.-]{0,63}\.log$`)
})

// LogDir is where the logs of the project in dir are kept.
func LogDir(dir string) string { return filepath.Join(dir, StateDir, "logs") }

// newLog creates in the logs folder d the log of one build of name started
// at t, named so that logs sort by start time, and removes all but the
// newest KeptLogs logs (this one included). The state directory and its
// logs folder are real directories of this user, opened once without
// following a symlink (openStateDir, ownDir.logs), and the log is created
// and old logs removed through that handle, so nothing is created or
// removed outside the project even if a folder is swapped for a symlink
// meanwhile. Only files the product wrote are ever removed.
func newLog(d *ownDir, name string, t time.Time) (*os.File, error) {
	stamp := t.UTC().Format("20060102T150405.000Z")
	stamp = stamp[:15] + stamp[16:] // no dot: 20261202T010203456Z
	var f *os.File
	var err error
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
func rotateLogs(d *ownDir, current string) {
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
