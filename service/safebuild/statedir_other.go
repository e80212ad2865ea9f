//go:build !unix

package safebuild

import (
	"io/fs"
	"os"
	"path/filepath"
)

// ownDir is a directory buildguard made under the project: its state
// directory or the logs folder in it, checked (EnsureStateDir,
// makeOwnDir) and then used by path: this system has no calls relative
// to an open directory.
type ownDir struct {
	path string
}

func openStateDir(dir string) (*ownDir, error) {
	path, err := EnsureStateDir(dir)
	if err != nil {
		return nil, err
	}
	return &ownDir{path: path}, nil
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
