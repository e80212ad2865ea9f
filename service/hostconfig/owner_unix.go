//go:build unix

package hostconfig

import (
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
)

// keepOwner gives tmp the owner and group of the file it replaces, so that
// running init with sudo does not hand a user's config to root. Only root
// may do that; for everyone else the plan has refused a file whose owner
// or group could not be kept.
func keepOwner(tmp *os.File, old fs.FileInfo) {
	if st, ok := old.Sys().(*syscall.Stat_t); ok && os.Geteuid() == 0 {
		_ = tmp.Chown(int(st.Uid), int(st.Gid))
	}
}

// takeDirOwner gives a new file, run as root, the owner and group of the
// directory it is created in.
func takeDirOwner(f *os.File, dir string) error {
	if os.Geteuid() != 0 {
		return nil
	}
	fi, err := os.Stat(dir)
	if err != nil {
		return err
	}
	st := fi.Sys().(*syscall.Stat_t)
	return f.Chown(int(st.Uid), int(st.Gid))
}

// takeParentOwner gives a new directory, run as root, the owner and group
// of the directory it was created in.
func takeParentOwner(dir string) error {
	if os.Geteuid() != 0 {
		return nil
	}
	fi, err := os.Stat(filepath.Dir(dir))
	if err != nil {
		return err
	}
	st := fi.Sys().(*syscall.Stat_t)
	return os.Lchown(dir, int(st.Uid), int(st.Gid))
}

// linkCount is the number of names (hard links) of the file fi describes;
// 1 for nil (a file that does not exist yet).
func linkCount(fi fs.FileInfo) uint64 {
	if fi == nil {
		return 1
	}
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		return uint64(st.Nlink)
	}
	return 1
}
