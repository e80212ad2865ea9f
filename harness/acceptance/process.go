//go:build unix

package acceptance

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// Bounds of docs/build-safety.md#3.
const (
	// stepTimeout bounds every subprocess of a scenario.
	stepTimeout = 240 * time.Second
	// waitDelay bounds how long a killed query may keep its output pipes.
	waitDelay = 5 * time.Second
	// cancelGrace is how long a step may take to stop after SIGTERM (on
	// timeout or cancellation) before its group gets SIGKILL. SIGTERM first
	// lets buildguard forward the signal to its child's own process group,
	// which a SIGKILL of our group would not reach. It fits in mage's 5 s
	// cleanup window after Ctrl-C.
	cancelGrace = 3 * time.Second
)

// step is one subprocess whose combined stdout and stderr go to a log.
type step struct {
	argv []string
	dir  string
	env  []string // added to the harness's own environment
	log  string   // appended to; created when missing
}

// stepResult is how a step ended.
type stepResult struct {
	exitCode int
	elapsed  time.Duration
}

// ErrStepTimeout: a step ran past stepTimeout and was killed.
var ErrStepTimeout = errors.New("step timed out")

// run starts s in its own process group and waits at most stepTimeout.
// When it times out or ctx ends, the group gets SIGTERM, then SIGKILL after
// cancelGrace; when the leader is gone the group gets SIGKILL in any case,
// so no descendant (a nested Gradle, a JVM) outlives the step. A non-zero exit is
// a result, not an error; an error means the step could not run or did not
// finish.
func run(ctx context.Context, s step) (stepResult, error) {
	ctx, cancel := context.WithTimeout(ctx, stepTimeout)
	defer cancel()
	f, err := os.OpenFile(s.log, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return stepResult{}, fmt.Errorf("opening log %s: %w", s.log, err)
	}
	defer f.Close()
	fmt.Fprintf(f, "# harness: running in %s: %s\n", s.dir, quoteArgv(s.argv))
	cmd := exec.CommandContext(ctx, s.argv[0], s.argv[1:]...)
	cmd.Dir = s.dir
	cmd.Env = append(os.Environ(), s.env...)
	cmd.Stdout, cmd.Stderr = f, f
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGTERM) }
	cmd.WaitDelay = cancelGrace
	start := time.Now()
	if err := cmd.Start(); err != nil {
		fmt.Fprintf(f, "# harness: cannot start: %v\n", err)
		return stepResult{}, fmt.Errorf("starting %s: %w", s.argv[0], err)
	}
	err = cmd.Wait()
	// Whatever the leader did, no member of its group may live on.
	_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	res := stepResult{exitCode: cmd.ProcessState.ExitCode(), elapsed: time.Since(start)}
	fmt.Fprintf(f, "# harness: exit %d after %d ms\n", res.exitCode, res.elapsed.Milliseconds())
	switch {
	case errors.Is(ctx.Err(), context.DeadlineExceeded):
		return res, fmt.Errorf("%w: %s ran longer than %s; see %s", ErrStepTimeout, s.argv[0], stepTimeout, s.log)
	case ctx.Err() != nil:
		return res, fmt.Errorf("running %s: %w", s.argv[0], ctx.Err())
	}
	var exitErr *exec.ExitError
	if err != nil && !errors.As(err, &exitErr) {
		return res, fmt.Errorf("running %s: %w", s.argv[0], err)
	}
	return res, nil
}

// output runs argv (bounded by stepTimeout) and returns its combined output;
// for version texts and other short queries.
func output(ctx context.Context, argv ...string) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, stepTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = waitDelay
	out, err := cmd.CombinedOutput()
	if err != nil {
		return string(out), fmt.Errorf("running %s: %w", quoteArgv(argv), err)
	}
	return string(out), nil
}

// quoteArgv renders argv for a log line, quoting arguments with spaces.
func quoteArgv(argv []string) string {
	q := make([]string, len(argv))
	for i, a := range argv {
		if a == "" || strings.ContainsAny(a, " \t\"'\\$;") {
			a = strconv.Quote(a)
		}
		q[i] = a
	}
	return strings.Join(q, " ")
}
