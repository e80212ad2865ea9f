//go:build unix

package stateignore

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"golang.org/x/sys/unix"
)

// Create writes dir/.gitignore holding Content unless a file of that name
// exists, which is left as it is. dir is opened without following a
// symlink, and the file is written under a temporary name in it and then
// linked to its name (linkat fails on any existing name, a symlink
// included), so the file is complete or absent and lands in dir alone.
func Create(dir string) error {
	dfd, err := unix.Open(dir, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		if errors.Is(err, unix.ELOOP) || errors.Is(err, unix.ENOTDIR) {
			return fmt.Errorf("%w: %s: %w", ErrNotADir, dir, err)
		}
		return fmt.Errorf("opening %s: %w", dir, err)
	}
	defer unix.Close(dfd)
	tmp := fmt.Sprintf("%s.%d-%d.tmp", Name, os.Getpid(), time.Now().UnixNano())
	fd, err := unix.Openat(dfd, tmp, unix.O_WRONLY|unix.O_CREAT|unix.O_EXCL|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0o644)
	if err != nil {
		return fmt.Errorf("creating %s: %w", filepath.Join(dir, tmp), err)
	}
	defer unix.Unlinkat(dfd, tmp, 0)
	f := os.NewFile(uintptr(fd), filepath.Join(dir, tmp))
	_, err = f.WriteString(Content)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("writing %s: %w", filepath.Join(dir, tmp), err)
	}
	if err := unix.Linkat(dfd, tmp, dfd, Name, 0); err != nil && !errors.Is(err, unix.EEXIST) {
		return fmt.Errorf("creating %s: %w", filepath.Join(dir, Name), err)
	}
	return nil
}
