//go:build unix

package filelock

import (
	"errors"
	"fmt"
	"os"

	"golang.org/x/sys/unix"
)

func lock(f *os.File, exclusive, wait bool) error {
	how := unix.LOCK_SH
	if exclusive {
		how = unix.LOCK_EX
	}
	if !wait {
		how |= unix.LOCK_NB
	}
	rc, err := f.SyscallConn()
	if err != nil {
		return err
	}
	var lerr error
	if err := rc.Control(func(fd uintptr) {
		for {
			lerr = unix.Flock(int(fd), how)
			if lerr != unix.EINTR {
				return
			}
		}
	}); err != nil {
		return err
	}
	if errors.Is(lerr, unix.EWOULDBLOCK) {
		return ErrWouldBlock
	}
	if unsupported(lerr) {
		if fi, err := f.Stat(); err == nil && fi.IsDir() {
			// NFS on Linux takes flock for a POSIX lock, which a directory
			// opened for reading cannot hold (EBADF).
			return &os.PathError{Op: "flock", Path: f.Name(), Err: fmt.Errorf("%w (%w)", ErrNoDirLock, lerr)}
		}
	}
	if lerr != nil {
		return &os.PathError{Op: "flock", Path: f.Name(), Err: lerr}
	}
	return nil
}

// unsupported reports whether a flock error says the file system cannot
// take this lock at all, rather than that it is taken or failed.
func unsupported(err error) bool {
	for _, e := range []error{unix.EBADF, unix.EINVAL, unix.EOPNOTSUPP, unix.ENOTSUP, unix.ENOSYS} {
		if errors.Is(err, e) {
			return true
		}
	}
	return false
}

func unlock(f *os.File) error {
	rc, err := f.SyscallConn()
	if err != nil {
		return err
	}
	var uerr error
	if err := rc.Control(func(fd uintptr) { uerr = unix.Flock(int(fd), unix.LOCK_UN) }); err != nil {
		return err
	}
	if uerr != nil {
		return &os.PathError{Op: "flock", Path: f.Name(), Err: uerr}
	}
	return nil
}

// OpenNoFollow opens path with flag (os.O_* bits; files are created with
// mode 0600) and refuses a symlink as its last element, close-on-exec so no
// child inherits the lock.
func OpenNoFollow(path string, flag int) (*os.File, error) {
	f, err := os.OpenFile(path, flag|unix.O_NOFOLLOW|unix.O_NONBLOCK, 0o600)
	if err != nil {
		if errors.Is(err, unix.ELOOP) {
			return nil, &os.PathError{Op: "open", Path: path, Err: ErrSymlink}
		}
		return nil, err
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, err
	}
	if !fi.Mode().IsRegular() {
		f.Close()
		return nil, &os.PathError{Op: "open", Path: path, Err: ErrNotRegular}
	}
	return f, nil
}

// OpenDir opens the directory at path to lock it (TryLock, Lock) as a
// whole: a lock nobody removes with the files in it. It is close-on-exec.
func OpenDir(path string) (*os.File, error) {
	fd, err := unix.Open(path, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, &os.PathError{Op: "open", Path: path, Err: err}
	}
	return os.NewFile(uintptr(fd), path), nil
}

// OpenKept is OpenNoFollow; on Unix nothing keeps an open file from being
// removed (see the Windows version).
func OpenKept(path string, flag int) (*os.File, error) { return OpenNoFollow(path, flag) }
