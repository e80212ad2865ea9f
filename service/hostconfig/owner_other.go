//go:build !unix

package hostconfig

import (
	"io/fs"
	"os"
)

// keepOwner does nothing where files have no Unix owner.
func keepOwner(*os.File, fs.FileInfo) {}

// takeDirOwner does nothing where files have no Unix owner.
func takeDirOwner(*os.File, string) error { return nil }

// takeParentOwner does nothing where files have no Unix owner.
func takeParentOwner(string) error { return nil }

// linkCount is 1 where os.FileInfo does not tell a file's hard links.
func linkCount(fs.FileInfo) uint64 { return 1 }
