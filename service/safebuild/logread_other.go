//go:build !unix

package safebuild

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

// openLogBeneath opens project/.buildguard/logs/name for reading on a
// system without calls relative to an open folder: each step is looked at
// without following a link (Lstat), the file opened by path, and then the
// identities compared: the opened file must be the one Lstat saw, and each
// folder must still be the one seen before the open, so a folder or file
// swapped for a link meanwhile is refused.
func openLogBeneath(project, name string) (*os.File, error) {
	state := filepath.Join(project, StateDir)
	logs := filepath.Join(state, "logs")
	path := filepath.Join(logs, name)
	var before []fs.FileInfo
	for _, dir := range []string{state, logs} {
		fi, err := os.Lstat(dir)
		if err == nil {
			err = checkOwn(dir, fi, true)
		}
		if err != nil {
			return nil, err
		}
		before = append(before, fi)
	}
	seen, err := os.Lstat(path)
	if err == nil {
		err = checkOwn(path, seen, false)
	}
	if err != nil {
		return nil, err
	}
	f, err := openNoFollow(path)
	if err != nil {
		return nil, err
	}
	opened, err := f.Stat()
	if err == nil && !os.SameFile(seen, opened) {
		err = fmt.Errorf("%s changed while it was opened", path)
	}
	for i, dir := range []string{state, logs} {
		if err != nil {
			break
		}
		if fi, lerr := os.Lstat(dir); lerr != nil || !os.SameFile(before[i], fi) || fi.Mode()&fs.ModeSymlink != 0 {
			err = fmt.Errorf("%s changed while %s was opened", dir, path)
		}
	}
	if err != nil {
		f.Close()
		return nil, err
	}
	return f, nil
}
