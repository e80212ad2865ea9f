//go:build !unix

package buildqueue

import "os"

// ownedByUs is true where file ownership is not a user id.
func ownedByUs(os.FileInfo) bool { return true }
