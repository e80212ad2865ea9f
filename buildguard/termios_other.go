//go:build unix && !(darwin || dragonfly || freebsd || netbsd || openbsd)

package buildguard

import "golang.org/x/sys/unix"

const ioctlGetTermios = unix.TCGETS
