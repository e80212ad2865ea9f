//go:build unix

package proc

import "golang.org/x/sys/unix"

// statSize holds any /proc/<pid>/stat: 52 numbers and a name of at most 64
// bytes.
const statSize = 1024

// readSmall reads the small file path into buf with plain system calls: a
// group scan reads one file per process, and os.ReadFile's stat and poller
// registration would triple its cost.
func readSmall(path string, buf []byte) ([]byte, bool) {
	fd, err := unix.Open(path, unix.O_RDONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, false
	}
	defer unix.Close(fd)
	n := 0
	for n < len(buf) {
		m, err := unix.Read(fd, buf[n:])
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return nil, false
		}
		if m == 0 {
			break
		}
		n += m
	}
	return buf[:n], true
}
