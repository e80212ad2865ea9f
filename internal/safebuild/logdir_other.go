//go:build !unix

package safebuild

import (
	"io/fs"
	"os"
	"path/filepath"
)

// logDir is a project's logs folder, checked (EnsureStateDir,
// ensureOwnDir) and then used by path: this system has no calls relative
// to an open directory.
type logDir struct {
	path string
}

func openLogDir(dir string) (*logDir, error) {
	if _, err := EnsureStateDir(dir); err != nil {
		return nil, err
	}
	path := LogDir(dir)
	if err := ensureOwnDir(path); err != nil {
		return nil, err
	}
	return &logDir{path: path}, nil
}

func (d *logDir) Close() error { return nil }

func (d *logDir) create(name string) (*os.File, error) {
	return createNoFollow(filepath.Join(d.path, name))
}

func (d *logDir) names() ([]string, error) {
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

func (d *logDir) lstat(name string) (fs.FileInfo, error) {
	return os.Lstat(filepath.Join(d.path, name))
}

func (d *logDir) remove(name string) error {
	return os.Remove(filepath.Join(d.path, name))
}
