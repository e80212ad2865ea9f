//go:build unix && !linux

package safebuild

import "os"

// openBeneath opens name in dir read-only, never through a symlink: a name
// without a slash opened with O_NOFOLLOW (openAt).
func openBeneath(dir *os.File, name string, flags int, path string) (*os.File, error) {
	return openAt(dir, name, flags, path)
}
