//go:build unix

package hostlanes

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"time"
)

// Bounds of the build ahead.
const (
	// aheadStartTimeout bounds the wait for the build ahead to take the
	// agent's hold.
	aheadStartTimeout = 60 * time.Second
	// aheadTimeout bounds the build ahead from its start to its end.
	aheadTimeout = 3 * time.Minute
)

// ahead is a guarded build run with `buildguard build run` before the host
// starts, so that the host's call waits behind it in the project's queue.
type ahead struct {
	cmd  *exec.Cmd
	out  bytes.Buffer
	done chan error
	stop context.CancelFunc
}

// startAhead starts `buildguard build run BUILD` in the project, in its own
// process group, and returns once the agent got its BUILD started. The
// caller must call finish on every path.
func startAhead(ctx context.Context, l *Lane, bg, build string, agent *laneAgent) (*ahead, error) {
	ctx, stop := context.WithTimeout(ctx, aheadTimeout)
	a := &ahead{stop: stop, done: make(chan error, 1)}
	a.cmd = exec.CommandContext(ctx, bg, "build", "run", build, "--project-dir", l.Project, "--timeout-ms", "60000")
	a.cmd.Dir = l.Project
	a.cmd.Env = hostEnv(l, nil)
	a.cmd.Stdout, a.cmd.Stderr = &a.out, &a.out
	group(a.cmd)
	if err := a.cmd.Start(); err != nil {
		stop()
		return nil, fmt.Errorf("starting the build ahead: %w", err)
	}
	go func() { a.done <- a.cmd.Wait() }()
	wctx, cancel := context.WithTimeout(ctx, aheadStartTimeout)
	defer cancel()
	started := make(chan error, 1)
	go func() { _, err := agent.WaitCommand(wctx, "BUILD started"); started <- err }()
	select {
	case err := <-started:
		if err != nil {
			a.finish(l.Dir, 0)
			return nil, fmt.Errorf("the build ahead did not take the hold within %v: %w", aheadStartTimeout, err)
		}
		return a, nil
	case err := <-a.done:
		a.done <- err
		a.finish(l.Dir, 0)
		return nil, fmt.Errorf("the build ahead ended before it took the hold: %v: %s", err, a.out.String())
	}
}

// finish waits up to d for the build ahead to end, kills its process group
// either way, writes its output to ahead.out in dir, and returns its exit
// code (-1 when it was killed).
func (a *ahead) finish(dir string, d time.Duration) (int, error) {
	defer a.stop()
	var err error
	select {
	case err = <-a.done:
	case <-time.After(d):
		killGroup(a.cmd)
		err = errors.Join(fmt.Errorf("the build ahead did not end within %v (killed)", d), <-a.done)
	}
	killGroup(a.cmd)
	werr := os.WriteFile(filepath.Join(dir, "ahead.out"), a.out.Bytes(), 0o644)
	var exit *exec.ExitError
	if errors.As(err, &exit) {
		err = nil
	}
	return a.cmd.ProcessState.ExitCode(), errors.Join(err, werr)
}
