//go:build unix

package hostconfig

import (
	"io/fs"
	"os"
	"syscall"
)

// keepOwner gives tmp the owner and group of the file it replaces, so that
// running init with sudo does not hand a user's config to root. Only root
// may do that; for everyone else the new file is theirs anyway, and a
// failure is ignored.
func keepOwner(tmp *os.File, old fs.FileInfo) {
	if st, ok := old.Sys().(*syscall.Stat_t); ok && os.Geteuid() == 0 {
		_ = tmp.Chown(int(st.Uid), int(st.Gid))
	}
}
