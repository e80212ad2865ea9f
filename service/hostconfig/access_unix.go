//go:build unix

package hostconfig

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/user"
	"path/filepath"
	"slices"
	"strconv"
	"syscall"

	"golang.org/x/sys/unix"
)

// Identity is a user as a permission check sees them.
type Identity struct {
	// UID is the user id; 0 is root, who may write anything not marked
	// read-only.
	UID int
	// GIDs are the user's groups.
	GIDs []int
}

// self returns the process's effective identity.
func self() Identity {
	gids, _ := os.Getgroups()
	return Identity{UID: os.Geteuid(), GIDs: append([]int{os.Getegid()}, gids...)}
}

// may reports whether who may access path (described by fi) as want asks
// (unix.W_OK, unix.X_OK): with who nil, as the kernel judges the process
// (access(2) with the effective ids: ACLs and read-only mounts count);
// otherwise by the mode bits, as the kernel would judge who.
func may(path string, fi fs.FileInfo, who *Identity, want uint32) bool {
	if who == nil {
		return unix.Faccessat(unix.AT_FDCWD, path, want, unix.AT_EACCESS) == nil
	}
	if who.UID == 0 {
		return true
	}
	st := fi.Sys().(*syscall.Stat_t)
	perm := uint32(fi.Mode().Perm())
	switch {
	case int(st.Uid) == who.UID:
		perm >>= 6
	case slices.Contains(who.GIDs, int(st.Gid)):
		perm >>= 3
	}
	return perm&want == want
}

// writable checks that the user may write c's target as Write writes it: a
// file that is not marked read-only, that they may write, in a directory
// they may create files in (the temporary file renamed over it), and whose
// owner and group stay (only root may give a file to someone else). For a
// new file, the nearest existing directory on its path must take new
// entries.
func (p *Planner) writable(c *Change) error {
	who := p.env.As
	id := self()
	if who != nil {
		id = *who
	}
	dir := filepath.Dir(c.Target)
	if c.info == nil {
		for {
			fi, err := os.Stat(dir)
			if err == nil && !fi.IsDir() {
				return fmt.Errorf("%w: %s is not a directory", ErrNotWritable, dir)
			}
			if err == nil {
				if !may(dir, fi, who, unix.W_OK|unix.X_OK) {
					return fmt.Errorf("%w: you may not create files in %s (%s)", ErrNotWritable, dir, ownership(fi))
				}
				return nil
			}
			if !errors.Is(err, fs.ErrNotExist) || filepath.Dir(dir) == dir {
				return fmt.Errorf("%w: %v", ErrNotWritable, err)
			}
			dir = filepath.Dir(dir)
		}
	}
	if c.info.Mode().Perm()&0o222 == 0 {
		return ErrReadOnly
	}
	if !may(c.Target, c.info, who, unix.W_OK) {
		return fmt.Errorf("%w: you may not write it (%s)", ErrNotWritable, ownership(c.info))
	}
	dfi, err := os.Stat(dir)
	if err != nil {
		return fmt.Errorf("%w: %v", ErrNotWritable, err)
	}
	if !may(dir, dfi, who, unix.W_OK|unix.X_OK) {
		return fmt.Errorf("%w: init replaces it with a new file written beside it, and you may not create files in %s (%s)", ErrNotWritable, dir, ownership(dfi))
	}
	st, dst := c.info.Sys().(*syscall.Stat_t), dfi.Sys().(*syscall.Stat_t)
	switch {
	case id.UID == 0:
	case int(st.Uid) != id.UID:
		return fmt.Errorf("%w: it belongs to %s, and the new file would belong to you", ErrNotWritable, userName(st.Uid))
	case !slices.Contains(id.GIDs, int(st.Gid)) && !(dfi.Mode()&fs.ModeSetgid != 0 && dst.Gid == st.Gid):
		return fmt.Errorf("%w: its group is %s, which you are not in, and the new file would get yours", ErrNotWritable, groupName(st.Gid))
	}
	return nil
}

// ownership describes fi's owner, group and mode for a message.
func ownership(fi fs.FileInfo) string {
	st := fi.Sys().(*syscall.Stat_t)
	return fmt.Sprintf("owner %s, group %s, mode %04o", userName(st.Uid), groupName(st.Gid), fi.Mode().Perm())
}

func userName(uid uint32) string {
	id := strconv.FormatUint(uint64(uid), 10)
	if u, err := user.LookupId(id); err == nil {
		return u.Username
	}
	return "uid " + id
}

func groupName(gid uint32) string {
	id := strconv.FormatUint(uint64(gid), 10)
	if g, err := user.LookupGroupId(id); err == nil {
		return g.Name
	}
	return "gid " + id
}
