//go:build unix

package acceptance

import (
	"fmt"
	"syscall"

	"golang.org/x/sys/unix"
)

// deadPort is a loopback TCP port that is bound but not listening: it is
// reserved (no other process can take it) and every connection to it is
// refused. Closing a listener and reusing its number would race with other
// processes on the machine; a bound socket does not.
type deadPort struct {
	fd   int
	port int
}

// reserveDeadPort binds a socket to 127.0.0.1:0 without listening. The
// caller must Close it once the scenario is over.
func reserveDeadPort() (*deadPort, error) {
	// Socket+CloseOnExec under ForkLock, as package net does where
	// SOCK_CLOEXEC is missing (macOS): no child may inherit the fd.
	syscall.ForkLock.RLock()
	fd, err := unix.Socket(unix.AF_INET, unix.SOCK_STREAM, 0)
	if err == nil {
		unix.CloseOnExec(fd)
	}
	syscall.ForkLock.RUnlock()
	if err != nil {
		return nil, fmt.Errorf("creating a socket: %w", err)
	}
	if err := unix.Bind(fd, &unix.SockaddrInet4{Addr: [4]byte{127, 0, 0, 1}}); err != nil {
		unix.Close(fd)
		return nil, fmt.Errorf("binding 127.0.0.1:0: %w", err)
	}
	sa, err := unix.Getsockname(fd)
	if err != nil {
		unix.Close(fd)
		return nil, fmt.Errorf("reading the bound port: %w", err)
	}
	in4, ok := sa.(*unix.SockaddrInet4)
	if !ok || in4.Port == 0 {
		unix.Close(fd)
		return nil, fmt.Errorf("binding 127.0.0.1:0: no port assigned")
	}
	return &deadPort{fd: fd, port: in4.Port}, nil
}

// Port is the reserved port number.
func (d *deadPort) Port() int { return d.port }

// Close releases the port. It is idempotent.
func (d *deadPort) Close() error {
	if d.fd < 0 {
		return nil
	}
	err := unix.Close(d.fd)
	d.fd = -1
	return err
}
