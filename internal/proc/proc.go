// Package proc reads the state of processes from Linux's /proc: the running
// members of a process group, for the core's rule that a build is ok only
// once its group is empty (docs/decisions.md#D12), and the state of one
// process (State, Gone), which tests and the harness use to check what
// became of the processes a build started.
//
// It is a leaf of the product (process-group inspection) and imports nothing
// of ours. It does not signal processes, collect them or wait for them: the
// bounded waits of tests are in internal/testsupport/wait. On systems
// without /proc every lookup reports nothing found.
package proc

import (
	"bytes"
	"errors"
	"os"
	"strconv"
)

// stat is what this package reads from /proc/<pid>/stat.
type stat struct {
	state byte
	pgrp  int
}

// readStat parses /proc/<pid>/stat, reporting false when there is no such
// process (or no /proc to tell).
func readStat(pid string) (stat, bool) {
	var buf [statSize]byte
	b, ok := readSmall("/proc/"+pid+"/stat", buf[:])
	if !ok {
		return stat{}, false
	}
	// The fields after the command name, which is in parentheses and may
	// itself hold any character: state ppid pgrp ...
	i := bytes.LastIndexByte(b, ')')
	if i < 0 || i+2 >= len(b) {
		return stat{}, false
	}
	f := bytes.Fields(b[i+1:])
	if len(f) < 3 || len(f[0]) != 1 {
		return stat{}, false
	}
	pgrp, err := strconv.Atoi(string(f[2]))
	if err != nil {
		return stat{}, false
	}
	return stat{state: f[0][0], pgrp: pgrp}, true
}

// State returns the state letter of process pid (R, S, D, T, Z, ...), and
// false when there is no such process (or no /proc to tell).
func State(pid int) (byte, bool) {
	s, ok := readStat(strconv.Itoa(pid))
	return s.state, ok
}

// Gone reports whether pid no longer runs: absent, or a zombie waiting for
// its parent to collect it.
func Gone(pid int) bool {
	s, ok := State(pid)
	return !ok || ended(s)
}

// ended reports whether a state letter is that of a process that has ended:
// a zombie (Z) or one being removed (X, x).
func ended(state byte) bool { return state == 'Z' || state == 'X' || state == 'x' }

// ErrNoProc means /proc cannot be read, so group members cannot be listed.
var ErrNoProc = errors.New("/proc is not available")

// GroupMembers returns the processes of process group pgid that have not
// ended (zombies are not counted: they run no more), in no particular order.
// Processes that left the group (setsid, setpgid) are not members. It
// returns ErrNoProc, wrapped, when /proc cannot be listed.
func GroupMembers(pgid int) ([]int, error) {
	d, err := os.Open("/proc")
	if err != nil {
		return nil, errors.Join(ErrNoProc, err)
	}
	defer d.Close()
	names, err := d.Readdirnames(-1)
	if err != nil {
		return nil, errors.Join(ErrNoProc, err)
	}
	var pids []int
	for _, n := range names {
		if n == "" || n[0] < '0' || n[0] > '9' {
			continue
		}
		s, ok := readStat(n)
		if !ok || s.pgrp != pgid || ended(s.state) {
			continue // gone meanwhile, another group, or ended
		}
		if pid, err := strconv.Atoi(n); err == nil {
			pids = append(pids, pid)
		}
	}
	return pids, nil
}
