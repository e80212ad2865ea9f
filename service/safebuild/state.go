package safebuild

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/buildguard/buildguard/internal/stateignore"
)

// ErrStateDir means the project's state directory (StateDir) or something
// in it that buildguard writes is not what buildguard made: a symlink, not a
// directory (or not a regular file), or another user's. Nothing is written
// or removed through it (docs/safe-build.md#9).
var ErrStateDir = errors.New("unusable state directory")

// EnsureStateDir returns the project's state directory dir/.buildguard,
// creating it when it is missing. It refuses a symlink, anything but a
// directory, and a directory of another user: buildguard never follows a
// symlink under the project's state directory, so its owner file and logs
// cannot land (and rotation cannot delete) outside the project
// (docs/decisions.md#D21).
// A state directory it creates is given its .gitignore
// (stateignore.Create); one that could not be written is no error.
func EnsureStateDir(dir string) (string, error) {
	path := filepath.Join(dir, StateDir)
	created, err := makeOwnDir(path)
	if created && err == nil {
		_ = stateignore.Create(path)
	}
	return path, err
}

// makeOwnDir creates path as a directory (0755) unless it exists, checks
// that it is a real directory of this user, and says whether it created
// it.
func makeOwnDir(path string) (created bool, err error) {
	fi, err := os.Lstat(path)
	if errors.Is(err, fs.ErrNotExist) {
		if err := os.Mkdir(path, 0o755); err == nil {
			created = true
		} else if !errors.Is(err, fs.ErrExist) {
			return false, fmt.Errorf("creating %s: %w", path, err)
		}
		fi, err = os.Lstat(path)
	}
	if err != nil {
		return created, fmt.Errorf("%w: %w", ErrStateDir, err)
	}
	return created, checkOwn(path, fi, true)
}

// checkOwn refuses what buildguard would not have made at path: a
// symlink, the wrong kind of file, or another user's file.
func checkOwn(path string, fi fs.FileInfo, dir bool) error {
	const fix = "buildguard keeps its owner file and build logs only in a real directory of the project, never through a link: remove it and build again"
	switch {
	case fi.Mode()&fs.ModeSymlink != 0:
		return fmt.Errorf("%w: %s is a symlink; %s", ErrStateDir, path, fix)
	case dir && !fi.IsDir():
		return fmt.Errorf("%w: %s is not a directory; %s", ErrStateDir, path, fix)
	case !dir && !fi.Mode().IsRegular():
		return fmt.Errorf("%w: %s is not a regular file; %s", ErrStateDir, path, fix)
	case !ownedByUs(fi):
		return fmt.Errorf("%w: %s belongs to another user; %s", ErrStateDir, path, fix)
	}
	return nil
}
