//go:build !unix

package safebuild

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/buildguard/buildguard/internal/stateignore"
)

// ownDir is a directory buildguard made under the project: its state
// directory or the logs folder in it, checked (makeOwnDir) and then used
// by path: this system has no calls relative to an open directory.
type ownDir struct {
	path string
}

// openStateDir checks dir/.buildguard, creating it when missing: a real
// directory of this user, never a symlink (makeOwnDir), so its owner file
// and logs cannot land (and rotation cannot delete) outside the project
// (docs/decisions.md#D21). A state directory it creates is given its
// .gitignore (stateignore.Create); one that could not be written is no
// error of the build.
func openStateDir(dir string) (*ownDir, error) {
	path := filepath.Join(dir, StateDir)
	created, err := makeOwnDir(path)
	if err != nil {
		return nil, err
	}
	if created {
		_ = stateignore.Create(path)
	}
	return &ownDir{path: path}, nil
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

func (d *ownDir) open(name string) (*os.File, error) {
	path := filepath.Join(d.path, name)
	fi, err := os.Lstat(path)
	if err != nil {
		return nil, err
	}
	if err := checkOwn(path, fi, false); err != nil {
		return nil, err
	}
	return openNoFollow(path)
}

func (d *ownDir) linkNew(name string, data []byte) error {
	tmp, err := os.CreateTemp(d.path, "."+name+"-*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	_, err = tmp.Write(data)
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return err
	}
	return os.Link(tmp.Name(), filepath.Join(d.path, name))
}

// logs checks the state directory's logs folder, path, as openStateDir
// checks the state directory, creating it when missing.
func (d *ownDir) logs(path string) (*ownDir, error) {
	if _, err := makeOwnDir(path); err != nil {
		return nil, err
	}
	return &ownDir{path: path}, nil
}

func (d *ownDir) Close() error { return nil }

func (d *ownDir) create(name string) (*os.File, error) {
	return createNoFollow(filepath.Join(d.path, name))
}

func (d *ownDir) names() ([]string, error) {
	entries, err := os.ReadDir(d.path)
	if err != nil {
		return nil, err
	}
	names := make([]string, len(entries))
	for i, e := range entries {
		names[i] = e.Name()
	}
	return names, nil
}

func (d *ownDir) lstat(name string) (fs.FileInfo, error) {
	return os.Lstat(filepath.Join(d.path, name))
}

func (d *ownDir) remove(name string) error {
	return os.Remove(filepath.Join(d.path, name))
}

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
