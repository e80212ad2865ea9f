//go:build unix

package safebuild

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"

	"golang.org/x/sys/unix"
)

// openLogBeneath opens project/.buildguard/logs/name for reading: each of
// the three names is opened relative to the folder opened before it and
// never through a link (openBeneath), so a folder swapped for a symlink
// while the log is read fails the open instead of leading elsewhere. The
// two folders must be directories of this user.
func openLogBeneath(project, name string) (*os.File, error) {
	return openLogWith(project, name, openBeneath)
}

// openLogWith is openLogBeneath opening each name with open.
func openLogWith(project, name string, open func(dir *os.File, name string, flags int, path string) (*os.File, error)) (*os.File, error) {
	// O_DIRECTORY|O_NONBLOCK: a named pipe or a device where the project
	// should be is refused at once, not waited on.
	fd, err := unix.Open(project, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NONBLOCK|unix.O_NOCTTY|unix.O_CLOEXEC, 0)
	dir, err := openedFile(fd, err, project)
	if err != nil {
		return nil, err
	}
	defer func() { _ = dir.Close() }() // the folder opened last
	path := project
	for _, sub := range []string{StateDir, "logs"} {
		path = filepath.Join(path, sub)
		next, err := open(dir, sub, unix.O_DIRECTORY, path)
		if err != nil {
			return nil, err
		}
		dir.Close()
		dir = next
		fi, err := dir.Stat()
		if err == nil {
			err = checkOwn(path, fi, true)
		}
		if err != nil {
			return nil, err
		}
	}
	// O_NONBLOCK: a named pipe under a log's name is opened, not waited
	// on, and then refused as not a regular file.
	return open(dir, name, unix.O_NONBLOCK|unix.O_NOCTTY, filepath.Join(path, name))
}

// openAt opens the single name in dir read-only with O_NOFOLLOW: a name
// without a slash is resolved in dir alone, and a symlink there fails the
// open (ELOOP), so no link is followed at any step.
func openAt(dir *os.File, name string, flags int, path string) (*os.File, error) {
	fd, err := unix.Openat(int(dir.Fd()), name, unix.O_RDONLY|unix.O_NOFOLLOW|unix.O_CLOEXEC|flags, 0)
	return openedFile(fd, err, path)
}

func openedFile(fd int, err error, path string) (*os.File, error) {
	if err != nil {
		if errors.Is(err, unix.ELOOP) {
			err = fmt.Errorf("%w: a symlink", err)
		}
		return nil, &fs.PathError{Op: "open", Path: path, Err: err}
	}
	return os.NewFile(uintptr(fd), path), nil
}

// linkCount is how many hard links the file has.
func linkCount(_ *os.File, fi fs.FileInfo) uint64 {
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		return uint64(st.Nlink)
	}
	return 0
}
