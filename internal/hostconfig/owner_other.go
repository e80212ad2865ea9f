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
