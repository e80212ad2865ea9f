//go:build !unix

package boundedfile

import (
	"fmt"
	"os"
)

// open stats path before opening it, so that something which is not a
// regular file is refused before an open that could wait.
func open(path string) (*os.File, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	if !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("%s is %s, %w", path, Describe(fi.Mode()), ErrNotRegular)
	}
	return os.Open(path)
}
