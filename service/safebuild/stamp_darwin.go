package safebuild

import (
	"io/fs"
	"os"
	"syscall"
)

func fileStamp(fi fs.FileInfo) stamp {
	st := stamp{size: fi.Size(), mtime: fi.ModTime().UnixNano()}
	if s, ok := fi.Sys().(*syscall.Stat_t); ok {
		st.ctime = s.Ctimespec.Nano()
		st.dev, st.ino = uint64(s.Dev), s.Ino
	}
	return st
}

// entryStamp is the stamp of the entry e of the open directory dir.
func entryStamp(_ *os.File, e fs.DirEntry) (stamp, error) {
	fi, err := e.Info()
	if err != nil {
		return stamp{}, err
	}
	return fileStamp(fi), nil
}
