//go:build windows

package buildguard

import (
	"fmt"
	"io"
	"os"
	"os/exec"
	"sync"
)

// ExecRunner runs the child with the wrapper's stdio (copied when a
// Transcript is kept). Windows has no process groups to signal: Signal and
// Kill end the child itself.
type ExecRunner struct {
	c    Command
	tw   *transcriptWriter
	mu   sync.Mutex
	cmd  *exec.Cmd
	done bool
}

// NewExecRunner returns a Runner for c.
func NewExecRunner(c Command) *ExecRunner {
	c = c.withDefaults()
	return &ExecRunner{c: c, tw: &transcriptWriter{w: c.Transcript, log: c.Logger}}
}

// Start implements Runner.
func (r *ExecRunner) Start() error {
	if len(r.c.Argv) == 0 {
		return fmt.Errorf("%w: no command given", ErrCannotRun)
	}
	cmd := exec.Command(r.c.Argv[0], r.c.Argv[1:]...)
	cmd.Dir, cmd.Env, cmd.Stdin = r.c.Dir, r.c.Env, r.c.Stdin
	cmd.Stdout, cmd.Stderr = r.c.Stdout, r.c.Stderr
	if r.c.Transcript != nil {
		cmd.Stdout = teeWriter{dst: r.c.Stdout, t: r.tw}
		cmd.Stderr = teeWriter{dst: r.c.Stderr, t: r.tw}
	}
	cmd.WaitDelay = r.c.DrainTimeout
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("%w: %w", ErrCannotRun, err)
	}
	r.mu.Lock()
	r.cmd = cmd
	r.mu.Unlock()
	return nil
}

// Wait implements Runner.
func (r *ExecRunner) Wait() (int, error) {
	r.mu.Lock()
	cmd := r.cmd
	r.mu.Unlock()
	if cmd == nil {
		return 0, fmt.Errorf("waiting for the build: it was not started")
	}
	err := cmd.Wait()
	r.mu.Lock()
	r.done = true
	r.mu.Unlock()
	if cmd.ProcessState == nil {
		return 0, fmt.Errorf("waiting for the build: %w", err)
	}
	return cmd.ProcessState.ExitCode(), nil
}

// Signal implements Runner; Windows can only end the child.
func (r *ExecRunner) Signal(os.Signal) error { return r.Kill() }

// Kill implements Runner.
func (r *ExecRunner) Kill() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.cmd == nil || r.done {
		return nil
	}
	_ = r.cmd.Process.Kill()
	return nil
}

// Resize implements Runner.
func (r *ExecRunner) Resize() error { return nil }

// Close implements Runner.
func (r *ExecRunner) Close() error { return r.Kill() }

// IsTerminal reports whether w is a terminal. The Windows build never uses a
// pseudo-terminal, so the answer does not change how the child runs.
func IsTerminal(w any) bool { return false }

// LogWriter returns the writer for the wrapper's own log lines on w; on
// Windows, where no runner changes the console mode, it is w itself.
func LogWriter(w io.Writer) io.Writer { return w }

// DefaultRunner returns an ExecRunner; Windows builds have no pty runner.
func DefaultRunner(c Command) Runner { return NewExecRunner(c) }

var notifySignals = []os.Signal{os.Interrupt}

func caughtSignals() []os.Signal { return notifySignals }

var terminateSignal = os.Kill

var quietSignals []os.Signal

func isResize(os.Signal) bool { return false }

func isInterrupt(s os.Signal) bool { return s == os.Interrupt }
