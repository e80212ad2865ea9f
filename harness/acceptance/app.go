//go:build unix

package acceptance

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/buildguard/buildguard/harness/jvm"
)

const (
	// readyTimeout bounds each wait for a line in app.log.
	readyTimeout = 30 * time.Second
	// pollInterval is how often a log or the agent is polled.
	pollInterval = 50 * time.Millisecond
)

// ErrAppExited: the live application ended while the proof needed it.
var ErrAppExited = errors.New("the live application exited")

// liveApp is the JVM running App with the agent attached.
type liveApp struct {
	proc *jvm.Process
	log  string
}

// appArgs is the JVM command line of docs/build-safety.md#3.
func appArgs(java, agentJar string, p project) []string {
	agentOpts := "watchDirs=" + p.outA() + ";" + p.outB() +
		",startupDelaySec=1,debounceMs=100,portFile=" + filepath.Join(p.root, "agent.port")
	cp := strings.Join([]string{p.outA(), p.outB(), p.appClasses()}, string(os.PathListSeparator))
	return []string{java, "-javaagent:" + agentJar + "=" + agentOpts, "-cp", cp, "App"}
}

// startApp launches the application in its own process group with cwd =
// the project root and stdout+stderr to app.log. The caller must Stop it.
func startApp(java, agentJar string, p project) (*liveApp, error) {
	args := appArgs(java, agentJar, p)
	logPath := p.log("app.log")
	proc, err := jvm.Start(jvm.Config{Java: args[0], Args: args[1:], Dir: p.root, LogFile: logPath})
	if err != nil {
		return nil, fmt.Errorf("starting the application: %w", err)
	}
	return &liveApp{proc: proc, log: logPath}, nil
}

// PID is the application's process id.
func (a *liveApp) PID() int { return a.proc.PID() }

// Running reports whether the application has not exited.
func (a *liveApp) Running() bool { return a.proc.Running() }

// Stop kills the application's process group and waits (bounded) until it
// is reaped. It is idempotent.
func (a *liveApp) Stop() error { return a.proc.Kill() }

// waitFor polls app.log until it contains text, the application exits,
// readyTimeout passes or ctx ends.
func (a *liveApp) waitFor(ctx context.Context, text string) error {
	return waitForLog(ctx, a.log, text, readyTimeout, a.proc.Exited())
}

// hasLinePrefix reports whether app.log has a line starting with prefix.
func (a *liveApp) hasLinePrefix(prefix string) (bool, error) {
	return fileHasLinePrefix(a.log, prefix)
}

// waitForLog re-reads path every pollInterval until it contains text. It
// fails after timeout, when ctx ends, or when done (may be nil) closes.
func waitForLog(ctx context.Context, path, text string, timeout time.Duration, done <-chan struct{}) error {
	deadline := time.NewTimer(timeout)
	defer deadline.Stop()
	tick := time.NewTicker(pollInterval)
	defer tick.Stop()
	for {
		b, err := os.ReadFile(path)
		if err != nil && !errors.Is(err, os.ErrNotExist) {
			return fmt.Errorf("reading %s: %w", path, err)
		}
		if bytes.Contains(b, []byte(text)) {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("waiting for %q in %s: %w", text, filepath.Base(path), ctx.Err())
		case <-deadline.C:
			return fmt.Errorf("missing %q after %s; see %s", text, timeout, path)
		case <-done:
			// One last read: the line may have landed just before the exit.
			if b, err := os.ReadFile(path); err == nil && bytes.Contains(b, []byte(text)) {
				return nil
			}
			return fmt.Errorf("%w before %q appeared; see %s", ErrAppExited, text, path)
		case <-tick.C:
		}
	}
}

// fileHasLinePrefix reports whether a line of path starts with prefix.
func fileHasLinePrefix(path, prefix string) (bool, error) {
	f, err := os.Open(path)
	if err != nil {
		return false, fmt.Errorf("reading %s: %w", path, err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64*1024), 1024*1024)
	for sc.Scan() {
		if strings.HasPrefix(sc.Text(), prefix) {
			return true, nil
		}
	}
	if err := sc.Err(); err != nil {
		return false, fmt.Errorf("reading %s: %w", path, err)
	}
	return false, nil
}
