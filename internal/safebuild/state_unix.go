//go:build unix

package safebuild

import (
	"io/fs"
	"os"
	"syscall"
)

// ownedByUs reports whether fi belongs to the effective user.
func ownedByUs(fi fs.FileInfo) bool {
	st, ok := fi.Sys().(*syscall.Stat_t)
	return !ok || int(st.Uid) == os.Geteuid()
}

// openNoFollow opens path for reading without following a symlink in its
// last component and without waiting on a named pipe.
func openNoFollow(path string) (*os.File, error) {
	return os.OpenFile(path, os.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_NONBLOCK, 0)
}
