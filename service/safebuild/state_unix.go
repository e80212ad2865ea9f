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
