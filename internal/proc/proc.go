// Package proc reads the state of processes from Linux's /proc: the running
// members of a process group, for the core's rule that a build is ok only
// once its group is empty (docs/decisions.md#D12); the processes of a
// group or session with their start times and the boot's id (Members,
// Lookup, BootID), for the queue's rule that no build starts while a
// process of an earlier one runs (docs/decisions.md#D22); and the state of
// one process (State, Gone), which tests and the harness use to check what
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
	state   byte
	pgrp    int
	session int
	start   uint64 // clock ticks after boot
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
	// itself hold any character: state ppid pgrp session ... starttime
	// (the 20th).
	i := bytes.LastIndexByte(b, ')')
	if i < 0 || i+2 >= len(b) {
		return stat{}, false
	}
	f := bytes.Fields(b[i+1:])
	if len(f) < 20 || len(f[0]) != 1 {
		return stat{}, false
	}
	pgrp, err1 := strconv.Atoi(string(f[2]))
	session, err2 := strconv.Atoi(string(f[3]))
	start, err3 := strconv.ParseUint(string(f[19]), 10, 64)
	if err1 != nil || err2 != nil || err3 != nil {
		return stat{}, false
	}
	return stat{state: f[0][0], pgrp: pgrp, session: session, start: start}, true
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

// Process is a process that has not ended, as /proc shows it.
type Process struct {
	PID     int
	PGID    int    // its process group
	Session int    // its session
	Start   uint64 // when it started, in clock ticks after boot
}

// Lookup returns process pid, and false when there is none that has not
// ended (or no /proc to tell).
func Lookup(pid int) (Process, bool) {
	s, ok := readStat(strconv.Itoa(pid))
	if !ok || ended(s.state) {
		return Process{}, false
	}
	return Process{PID: pid, PGID: s.pgrp, Session: s.session, Start: s.start}, true
}

// Members returns the processes that have not ended and belong to process
// group pgid or, when sid is not 0, to session sid, in no particular
// order. It returns ErrNoProc, wrapped, when /proc cannot be listed.
func Members(pgid, sid int) ([]Process, error) {
	var out []Process
	err := each(func(pid int, s stat) {
		if s.pgrp == pgid || (sid != 0 && s.session == sid) {
			out = append(out, Process{PID: pid, PGID: s.pgrp, Session: s.session, Start: s.start})
		}
	})
	return out, err
}

// BootID returns the id of the running boot of the system
// (/proc/sys/kernel/random/boot_id), or "" where there is none to read:
// a process's start time says when it started only within one boot.
func BootID() string {
	var buf [64]byte
	b, ok := readSmall("/proc/sys/kernel/random/boot_id", buf[:])
	if !ok {
		return ""
	}
	return string(bytes.TrimSpace(b))
}

// GroupMembers returns the processes of process group pgid that have not
// ended (zombies are not counted: they run no more), in no particular order.
// Processes that left the group (setsid, setpgid) are not members. It
// returns ErrNoProc, wrapped, when /proc cannot be listed.
func GroupMembers(pgid int) ([]int, error) {
	ps, err := Members(pgid, 0)
	pids := make([]int, len(ps))
	for i, p := range ps {
		pids[i] = p.PID
	}
	return pids, err
}

// each calls f for every process of /proc that has not ended.
func each(f func(pid int, s stat)) error {
	d, err := os.Open("/proc")
	if err != nil {
		return errors.Join(ErrNoProc, err)
	}
	defer d.Close()
	names, err := d.Readdirnames(-1)
	if err != nil {
		return errors.Join(ErrNoProc, err)
	}
	for _, n := range names {
		if n == "" || n[0] < '0' || n[0] > '9' {
			continue
		}
		s, ok := readStat(n)
		if !ok || ended(s.state) {
			continue // gone meanwhile, or ended
		}
		if pid, err := strconv.Atoi(n); err == nil {
			f(pid, s)
		}
	}
	return nil
}
