package safebuild

import (
	"io/fs"
	"os"
	"syscall"
)

// linkCount is how many hard links the open file has.
func linkCount(f *os.File, _ fs.FileInfo) uint64 {
	var info syscall.ByHandleFileInformation
	if err := syscall.GetFileInformationByHandle(syscall.Handle(f.Fd()), &info); err != nil {
		return 0
	}
	return uint64(info.NumberOfLinks)
}
