//go:build unix

package buildguard

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"sync"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// group is a started child that leads its own process group. It serialises
// signals against the reaping of the child, so that no signal is ever sent
// to a process group id that the kernel may have handed to someone else.
type group struct {
	mu     sync.Mutex
	cmd    *exec.Cmd
	pid    int  // 0 before start
	reaped bool // the group is done with; pid means nothing any more
	// onStop, when set before start, is called (from wait) each time the
	// child stops, with the signal that stopped it. Where the system cannot
	// report stops (not Linux), it is never called.
	onStop func(sig syscall.Signal)
}

func (g *group) started(cmd *exec.Cmd) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.cmd = cmd
	g.pid = cmd.Process.Pid
}

// Signal implements Runner: it forwards sig to the whole group.
func (g *group) Signal(sig os.Signal) error {
	s, err := toSyscallSignal(sig)
	if err != nil {
		return err
	}
	return g.signal(s)
}

// Kill implements Runner: it kills the whole group.
func (g *group) Kill() error { return g.signal(syscall.SIGKILL) }

// signal sends sig to the whole group while its leader is not collected.
func (g *group) signal(sig syscall.Signal) error {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.signalLocked(sig)
}

func (g *group) signalLocked(sig syscall.Signal) error {
	if g.pid == 0 || g.reaped {
		return nil
	}
	if err := syscall.Kill(-g.pid, sig); err != nil && !errors.Is(err, syscall.ESRCH) {
		return fmt.Errorf("signalling the build's process group: %w", err)
	}
	return nil
}

// wait waits until the leader exited (reporting its stops to onStop), and,
// when it exited 0, up to linger for the other members of its process group
// to end: a build is ok only once its group is empty (docs/decisions.md#D12).
// A negative linger looks once. Then it kills whatever is left of the group
// and collects the leader. It returns the leader's exit code and, when the
// code is 0, how many processes were still running after linger: -1 when
// some were but the system cannot count them.
//
// On Linux the leader stays a zombie until its exit code is known, so its
// id cannot be reused meanwhile; a failed build's group is killed before it
// is collected. After exit 0 the leader is collected first, so that kill(2)
// on the group's id answers for the rest of the group alone; POSIX does not
// reuse that id while the group has members, and the group is signalled
// only while a look found members.
func (g *group) wait(linger time.Duration) (code, left int, err error) {
	g.mu.Lock()
	cmd, pid, onStop := g.cmd, g.pid, g.onStop
	g.mu.Unlock()
	if cmd == nil {
		return 0, 0, errors.New("waiting for the build: it was not started")
	}
	held := false // the leader exited and is not collected
	for {
		ev, ok := waitEvent(pid, onStop != nil)
		if !ok {
			break
		}
		if !ev.exited {
			onStop(ev.stop)
			continue
		}
		code, held = ev.code, true
		break
	}
	if !held || code == 0 {
		werr := cmd.Wait()
		held = false
		if cmd.ProcessState == nil {
			g.finish(true)
			return 0, 0, fmt.Errorf("waiting for the build: %w", werr)
		}
		code = exitCode(cmd.ProcessState)
	}
	if code == 0 {
		left = g.linger(pid, linger)
	}
	// A collected leader's empty group has an id that may be someone else's.
	g.finish(held || left != 0)
	if held {
		_ = cmd.Wait()
	}
	return code, left, nil
}

// finish kills what is left of the group (when kill is set) and marks it
// done, so that no later signal goes to its id.
func (g *group) finish(kill bool) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if kill {
		_ = g.signalLocked(syscall.SIGKILL)
	}
	g.reaped = true
}

// lingerPoll bounds the pause between two looks at a group that still has
// members: the kernel tells nobody when a process that is not our child ends.
const lingerPoll = 50 * time.Millisecond

// linger waits up to d (one look when d < 0) until process group pgid,
// whose leader was collected, has no running member, and returns how many
// are left (-1: some, not counted).
func (g *group) linger(pgid int, d time.Duration) int {
	deadline := time.Now().Add(d)
	pause := time.Millisecond
	for {
		n := runningMembers(pgid)
		if n == 0 || !time.Now().Before(deadline) {
			return n
		}
		time.Sleep(min(pause, time.Until(deadline)))
		pause = min(2*pause, lingerPoll)
	}
}

// runningMembers returns how many processes of group pgid run: 0 at once
// when kill(2) finds no member (one system call, the common case), else
// the members counted where the system can count them (a zombie member,
// not collected by a parent that left the group, runs no more), else -1.
func runningMembers(pgid int) int {
	if err := unix.Kill(-pgid, 0); errors.Is(err, unix.ESRCH) {
		return 0
	}
	if n, ok := groupMembers(pgid); ok {
		return n
	}
	return -1
}

// exitCode is the child's own code, or 128+n when signal n ended it.
func exitCode(ps *os.ProcessState) int {
	if ws, ok := ps.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		return 128 + int(ws.Signal())
	}
	return ps.ExitCode()
}

func toSyscallSignal(sig os.Signal) (syscall.Signal, error) {
	s, ok := sig.(syscall.Signal)
	if !ok {
		return 0, fmt.Errorf("signal %v cannot be forwarded", sig)
	}
	return s, nil
}

// stragglers is Wait's error for left processes of the group left running
// after the child exited 0: nil for none.
func stragglers(left int) error {
	if left == 0 {
		return nil
	}
	return &StragglersError{N: left}
}
