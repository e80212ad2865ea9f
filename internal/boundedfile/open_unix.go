//go:build unix

package boundedfile

import (
	"os"
	"syscall"
)

// open opens path without blocking: O_NONBLOCK makes opening a named pipe
// return at once instead of waiting for a writer. Open refuses anything but
// a regular file before it is read, and on a regular file the flag has no
// effect.
func open(path string) (*os.File, error) {
	return os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
}
