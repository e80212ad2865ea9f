package safebuild

import (
	"errors"
	"os"

	"golang.org/x/sys/unix"
)

// openBeneath opens name in dir read-only with openat2, resolved beneath
// dir with no symlink and no magic link at any step; where the kernel has
// no openat2 (ENOSYS before Linux 5.6, EPERM from a seccomp filter) with
// openAt, which holds the same for a name without a slash.
func openBeneath(dir *os.File, name string, flags int, path string) (*os.File, error) {
	fd, err := unix.Openat2(int(dir.Fd()), name, &unix.OpenHow{
		Flags:   uint64(unix.O_RDONLY | unix.O_NOFOLLOW | unix.O_CLOEXEC | flags),
		Resolve: unix.RESOLVE_BENEATH | unix.RESOLVE_NO_SYMLINKS | unix.RESOLVE_NO_MAGICLINKS,
	})
	if errors.Is(err, unix.ENOSYS) || errors.Is(err, unix.EPERM) {
		return openAt(dir, name, flags, path)
	}
	return openedFile(fd, err, path)
}
