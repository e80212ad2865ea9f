//go:build !linux

package buildqueue

import (
	"errors"
	"syscall"
)

// childAttr: only Linux records a build's processes (outlive.go).
func childAttr(bool) *syscall.SysProcAttr { return nil }

func newGroup() error { return errors.New("not here") }
