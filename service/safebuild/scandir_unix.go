//go:build unix

package safebuild

import (
	"os"

	"golang.org/x/sys/unix"
)

// openScanDir opens the directory rel beneath root, the open top of a
// scanned tree (path is its whole name), never through a symlink
// (openBeneath: at any step on Linux 5.6 and later, at the last one
// elsewhere): a directory of the tree swapped for a link while the scan
// reads it is not followed out of the tree. With no root, the directory at
// path, itself no symlink.
func openScanDir(root *os.File, rel, path string) (*os.File, error) {
	if root == nil {
		fd, err := unix.Open(path, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
		return openedFile(fd, err, path)
	}
	return openBeneath(root, rel, unix.O_DIRECTORY, path)
}
