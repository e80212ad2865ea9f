//go:build !unix

package safebuild

import (
	"io/fs"
	"os"
)

// ownedByUs reports whether fi belongs to the effective user; without Unix
// ownership every file counts as ours.
func ownedByUs(fs.FileInfo) bool { return true }

// openNoFollow opens path for reading; the caller has checked with Lstat
// that it is not a symlink.
func openNoFollow(path string) (*os.File, error) { return os.Open(path) }

// createNoFollow creates path new (O_EXCL does not follow a symlink).
func createNoFollow(path string) (*os.File, error) {
	return os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
}
