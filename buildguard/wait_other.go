//go:build unix && !linux

package buildguard

import "golang.org/x/sys/unix"

// childEvent is what waiting for the child reported; see wait_linux.go.
type childEvent struct {
	exited bool
	code   int
	stop   unix.Signal
}

// waitEvent reports that this system cannot wait without collecting; the
// child is then collected first and its group watched by its id, which
// POSIX keeps from reuse while the group has members.
func waitEvent(int, bool) (childEvent, bool) { return childEvent{}, false }

// groupMembers cannot count the members of a group here.
func groupMembers(int) (int, bool) { return 0, false }
