//go:build !windows

package agentproto

import (
	"errors"
	"syscall"
)

// refused reports whether err is a refused TCP connect.
func refused(err error) bool { return errors.Is(err, syscall.ECONNREFUSED) }
