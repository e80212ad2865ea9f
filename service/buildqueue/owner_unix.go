//go:build unix

package buildqueue

import (
	"os"
	"syscall"
)

// ownedByUs reports whether fi belongs to the user running buildguard:
// another user's queue could hold our builds back for ever.
func ownedByUs(fi os.FileInfo) bool {
	st, ok := fi.Sys().(*syscall.Stat_t)
	return !ok || int(st.Uid) == os.Geteuid()
}
