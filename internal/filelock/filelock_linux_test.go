package filelock

import (
	"errors"
	"os"
	"testing"

	"golang.org/x/sys/unix"
)

// TestDirectoryFlockUnsupported: a directory whose flock the file system
// refuses as impossible (NFS answers EBADF; an O_PATH descriptor does the
// same here) says ErrNoDirLock, so the caller locks a file instead; a
// regular file refused the same way does not.
func TestDirectoryFlockUnsupported(t *testing.T) {
	dir := t.TempDir()
	fd, err := unix.Open(dir, unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	d := os.NewFile(uintptr(fd), dir)
	defer d.Close()
	if err := TryLock(d); !errors.Is(err, ErrNoDirLock) || !errors.Is(err, unix.EBADF) {
		t.Fatalf("TryLock of a directory the file system cannot lock = %v, want ErrNoDirLock wrapping EBADF", err)
	}
	p := dir + "/file"
	if err := os.WriteFile(p, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	fd, err = unix.Open(p, unix.O_PATH|unix.O_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	f := os.NewFile(uintptr(fd), p)
	defer f.Close()
	if err := TryLock(f); err == nil || errors.Is(err, ErrNoDirLock) {
		t.Fatalf("TryLock of a file the file system cannot lock = %v, want an error that is not ErrNoDirLock", err)
	}
}
