// Package proc reads the state of a process from Linux's /proc, for tests
// and harnesses that check what became of the processes a build started.
package proc

import (
	"bytes"
	"os"
	"strconv"
)

// State returns the state letter of process pid (R, S, D, T, Z, ...), and
// false when there is no such process (or no /proc to tell).
func State(pid int) (byte, bool) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0, false
	}
	// The state follows the command name, which is in parentheses and may
	// itself hold any character.
	i := bytes.LastIndexByte(b, ')')
	if i < 0 || i+2 >= len(b) {
		return 0, false
	}
	return b[i+2], true
}

// Gone reports whether pid no longer runs: absent, or a zombie waiting for
// its parent to collect it.
func Gone(pid int) bool {
	s, ok := State(pid)
	return !ok || s == 'Z'
}
