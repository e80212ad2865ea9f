//go:build !unix

package safebuild

import "os"

// openScanDir opens the directory at path, a part of a scanned tree, on a
// system without calls relative to an open folder.
func openScanDir(_ *os.File, _, path string) (*os.File, error) {
	return os.Open(path)
}
