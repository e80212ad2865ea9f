//go:build !unix

package stateignore

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

// Create writes dir/.gitignore holding Content unless a file of that name
// exists, which is left as it is. dir must be a directory, not a link; the
// file is written under a temporary name in it and then linked to its
// name (which fails on any existing name), so it is complete or absent.
func Create(dir string) error {
	fi, err := os.Lstat(dir)
	if err != nil {
		return fmt.Errorf("opening %s: %w", dir, err)
	}
	if fi.Mode()&fs.ModeSymlink != 0 || !fi.IsDir() {
		return fmt.Errorf("%w: %s", ErrNotADir, dir)
	}
	tmp, err := os.CreateTemp(dir, Name+".*.tmp")
	if err != nil {
		return fmt.Errorf("creating %s: %w", filepath.Join(dir, Name), err)
	}
	defer os.Remove(tmp.Name())
	_, err = tmp.WriteString(Content)
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("writing %s: %w", tmp.Name(), err)
	}
	if err := os.Link(tmp.Name(), filepath.Join(dir, Name)); err != nil && !errors.Is(err, fs.ErrExist) {
		return fmt.Errorf("creating %s: %w", filepath.Join(dir, Name), err)
	}
	return nil
}
