//go:build !linux && !darwin

package safebuild

import "io/fs"

// fileStamp has only size and modification time here; files that change
// within recentWindow of a snapshot are compared by content.
func fileStamp(fi fs.FileInfo) stamp {
	return stamp{size: fi.Size(), mtime: fi.ModTime().UnixNano()}
}
