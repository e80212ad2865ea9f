package safebuild

import (
	"io/fs"
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
