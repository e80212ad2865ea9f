//go:build !linux && !darwin

package safebuild

import (
	"io/fs"
	"os"
)

// fileStamp has only size and modification time here; files that change
// within recentWindow of a snapshot are compared by content.
func fileStamp(fi fs.FileInfo) stamp {
	return stamp{size: fi.Size(), mtime: fi.ModTime().UnixNano()}
}

// entryStamp is the stamp of the entry e of the open directory dir.
func entryStamp(_ *os.File, e fs.DirEntry) (stamp, error) {
	fi, err := e.Info()
	if err != nil {
		return stamp{}, err
	}
	return fileStamp(fi), nil
}
