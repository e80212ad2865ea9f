//go:build windows

package filelock

import (
	"errors"
	"os"
	"syscall"

	"golang.org/x/sys/windows"
)

// The lock covers one byte far beyond the end of any file we write: Windows
// locks are mandatory, and a lock on the content would stop others from
// reading it.
const (
	lockOffsetHigh = 0x40000000
	lockLen        = 1
)

func lock(f *os.File, exclusive, wait bool) error {
	var flags uint32
	if exclusive {
		flags |= windows.LOCKFILE_EXCLUSIVE_LOCK
	}
	if !wait {
		flags |= windows.LOCKFILE_FAIL_IMMEDIATELY
	}
	rc, err := f.SyscallConn()
	if err != nil {
		return err
	}
	var lerr error
	if err := rc.Control(func(h uintptr) {
		ol := &windows.Overlapped{OffsetHigh: lockOffsetHigh}
		lerr = windows.LockFileEx(windows.Handle(h), flags, 0, lockLen, 0, ol)
	}); err != nil {
		return err
	}
	if errors.Is(lerr, windows.ERROR_LOCK_VIOLATION) || errors.Is(lerr, windows.ERROR_IO_PENDING) {
		return ErrWouldBlock
	}
	if lerr != nil {
		return &os.PathError{Op: "LockFileEx", Path: f.Name(), Err: lerr}
	}
	return nil
}

func unlock(f *os.File) error {
	rc, err := f.SyscallConn()
	if err != nil {
		return err
	}
	var uerr error
	if err := rc.Control(func(h uintptr) {
		ol := &windows.Overlapped{OffsetHigh: lockOffsetHigh}
		uerr = windows.UnlockFileEx(windows.Handle(h), 0, lockLen, 0, ol)
	}); err != nil {
		return err
	}
	if uerr != nil {
		return &os.PathError{Op: "UnlockFileEx", Path: f.Name(), Err: uerr}
	}
	return nil
}

// OpenNoFollow opens path with flag (os.O_* bits) and refuses a symlink or
// other reparse point as its last element. The file is opened with
// FILE_SHARE_DELETE so that its holder, or whoever finds it abandoned, can
// remove it while others still have it open.
func OpenNoFollow(path string, flag int) (*os.File, error) {
	return open(path, flag, windows.FILE_SHARE_DELETE)
}

// OpenKept is OpenNoFollow without FILE_SHARE_DELETE: while the file is
// open, neither it nor a directory above it can be removed or renamed.
func OpenKept(path string, flag int) (*os.File, error) { return open(path, flag, 0) }

// OpenDir returns ErrNoDirLock: LockFileEx cannot lock a directory.
func OpenDir(path string) (*os.File, error) {
	return nil, &os.PathError{Op: "open", Path: path, Err: ErrNoDirLock}
}

// open opens path as OpenNoFollow does, shared for reading, writing and
// the share bits in shareDelete.
func open(path string, flag int, shareDelete uint32) (*os.File, error) {
	p, err := windows.UTF16PtrFromString(path)
	if err != nil {
		return nil, &os.PathError{Op: "open", Path: path, Err: err}
	}
	access := uint32(windows.GENERIC_READ)
	if flag&(os.O_WRONLY|os.O_RDWR) != 0 {
		access |= windows.GENERIC_WRITE
	}
	disposition := uint32(windows.OPEN_EXISTING)
	switch {
	case flag&os.O_CREATE != 0 && flag&os.O_EXCL != 0:
		disposition = windows.CREATE_NEW
	case flag&os.O_CREATE != 0:
		disposition = windows.OPEN_ALWAYS
	}
	share := uint32(windows.FILE_SHARE_READ|windows.FILE_SHARE_WRITE) | shareDelete
	attrs := uint32(windows.FILE_ATTRIBUTE_NORMAL | windows.FILE_FLAG_OPEN_REPARSE_POINT)
	h, err := windows.CreateFile(p, access, share, nil, disposition, attrs, 0)
	if err != nil {
		if errors.Is(err, windows.ERROR_FILE_NOT_FOUND) || errors.Is(err, windows.ERROR_PATH_NOT_FOUND) {
			err = syscall.ENOENT
		}
		if errors.Is(err, windows.ERROR_FILE_EXISTS) {
			err = os.ErrExist
		}
		return nil, &os.PathError{Op: "open", Path: path, Err: err}
	}
	var info windows.ByHandleFileInformation
	if err := windows.GetFileInformationByHandle(h, &info); err != nil {
		windows.CloseHandle(h)
		return nil, &os.PathError{Op: "open", Path: path, Err: err}
	}
	if info.FileAttributes&windows.FILE_ATTRIBUTE_REPARSE_POINT != 0 {
		windows.CloseHandle(h)
		return nil, &os.PathError{Op: "open", Path: path, Err: ErrSymlink}
	}
	if info.FileAttributes&windows.FILE_ATTRIBUTE_DIRECTORY != 0 {
		windows.CloseHandle(h)
		return nil, &os.PathError{Op: "open", Path: path, Err: ErrNotRegular}
	}
	return os.NewFile(uintptr(h), path), nil
}
