package safebuild

import (
	"io/fs"
	"os"
	"path/filepath"
	"syscall"

	"golang.org/x/sys/unix"
)

// entryStamp is the stamp of the entry e of the open directory dir, read
// relative to dir: no lookup of the directory's path for each of its
// files.
func entryStamp(dir *os.File, e fs.DirEntry) (stamp, error) {
	var s unix.Stat_t
	if err := unix.Fstatat(int(dir.Fd()), e.Name(), &s, unix.AT_SYMLINK_NOFOLLOW); err != nil {
		return stamp{}, &fs.PathError{Op: "lstat", Path: filepath.Join(dir.Name(), e.Name()), Err: err}
	}
	return stamp{size: s.Size, mtime: s.Mtim.Nano(), ctime: s.Ctim.Nano(), dev: uint64(s.Dev), ino: s.Ino}, nil
}

// fileStamp is the stamp of fi, as an lstat read it.
func fileStamp(fi fs.FileInfo) stamp {
	st := stamp{size: fi.Size(), mtime: fi.ModTime().UnixNano()}
	if s, ok := fi.Sys().(*syscall.Stat_t); ok {
		st.ctime = s.Ctim.Nano()
		st.dev, st.ino = uint64(s.Dev), s.Ino
	}
	return st
}
