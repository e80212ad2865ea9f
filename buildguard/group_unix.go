//go:build unix

package buildguard

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"sync"
	"syscall"
)

// group is a started child that leads its own process group. It serialises
// signals against the reaping of the child, so that no signal is ever sent
// to a process group id that the kernel may have handed to someone else.
type group struct {
	mu     sync.Mutex
	cmd    *exec.Cmd
	pid    int  // 0 before start
	reaped bool // the child was collected; pid means nothing any more
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

// wait waits until the leader exited, kills what is left of its group, and
// then collects the leader. On Linux the leader stays a zombie until the
// group is killed, so its id cannot be reused in between.
func (g *group) wait() (int, error) {
	g.mu.Lock()
	cmd, pid := g.cmd, g.pid
	g.mu.Unlock()
	if cmd == nil {
		return 0, errors.New("waiting for the build: it was not started")
	}
	var err error
	if waitExited(pid) {
		g.mu.Lock()
		_ = g.signalLocked(syscall.SIGKILL)
		g.reaped = true
		g.mu.Unlock()
		err = cmd.Wait()
	} else {
		err = cmd.Wait()
		g.mu.Lock()
		_ = g.signalLocked(syscall.SIGKILL)
		g.reaped = true
		g.mu.Unlock()
	}
	if cmd.ProcessState == nil {
		return 0, fmt.Errorf("waiting for the build: %w", err)
	}
	return exitCode(cmd.ProcessState), nil
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
