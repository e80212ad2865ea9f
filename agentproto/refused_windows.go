package agentproto

import (
	"errors"
	"syscall"
)

// wsaeconnrefused is WSAECONNREFUSED, what a refused connect returns on
// Windows. syscall.ECONNREFUSED is an invented value there that no socket
// call returns, so errors.Is against it never matches.
const wsaeconnrefused = syscall.Errno(10061)

// refused reports whether err is a refused TCP connect.
func refused(err error) bool {
	return errors.Is(err, wsaeconnrefused) || errors.Is(err, syscall.ECONNREFUSED)
}
