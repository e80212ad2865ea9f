//go:build unix

package buildguard

import (
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/buildguard/buildguard/internal/testsupport/reexec"
)

// TestRunAdmitsBeforeTheHold: the build's turn (Config.Admit) comes before
// the agent is asked for anything, its variables reach the command, and the
// turn is released only after the finish was acknowledged.
func TestRunAdmitsBeforeTheHold(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	out := filepath.Join(t.TempDir(), "env")
	argv, env := reexec.Command(t, "env", out, "BUILDGUARD_TEST_TURN")
	h.cfg.Env = env
	var mu sync.Mutex
	var steps []string
	step := func(s string) { mu.Lock(); steps = append(steps, s); mu.Unlock() }
	h.cfg.Admit = func(context.Context) ([]string, func(), error) {
		step("admitted:" + h.agent.states())
		return []string{"BUILDGUARD_TEST_TURN=t-7"}, func() { step("released:" + h.agent.states()) }, nil
	}
	g, err := New(h.cfg)
	if err != nil {
		t.Fatal(err)
	}
	if code, err := g.Run(context.Background(), argv); err != nil || code != 0 {
		t.Fatalf("Run = %d, %v", code, err)
	}
	if want := []string{"admitted:", "released:started,ok"}; !slices.Equal(steps, want) {
		t.Errorf("steps %v, want %v", steps, want)
	}
	if got, _ := os.ReadFile(out); strings.TrimSpace(string(got)) != "t-7" {
		t.Errorf("the command saw BUILDGUARD_TEST_TURN=%q", got)
	}
}

// TestRunAdmitRefusalAsksNothing: a build that gets no turn is refused
// before the agent is asked for anything, and its command never runs.
func TestRunAdmitRefusalAsksNothing(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	marker := filepath.Join(t.TempDir(), "ran")
	argv, env := reexec.Command(t, "marker", marker)
	h.cfg.Env = env
	h.cfg.Admit = func(context.Context) ([]string, func(), error) {
		return nil, nil, errors.New("the queue is a symlink")
	}
	g, err := New(h.cfg)
	if err != nil {
		t.Fatal(err)
	}
	_, err = g.Run(context.Background(), argv)
	var re *RefusalError
	if !errors.As(err, &re) || !errors.Is(err, ErrRefused) || !strings.Contains(err.Error(), "build queue: the queue is a symlink") {
		t.Fatalf("err = %v, want a refusal naming the queue", err)
	}
	if got := h.agent.states(); got != "" {
		t.Errorf("the agent got %s", got)
	}
	if _, err := os.Stat(marker); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the child ran: %v", err)
	}
}

// TestRunAdmitsWhileCatchingSignals: the build's turn is taken while the
// process's signals are being caught, not after (the wrapper's start,
// docs/performance.md#4), and SignalsCaught tells the turn when they are
// caught; the build then runs as ever.
func TestRunAdmitsWhileCatchingSignals(t *testing.T) {
	t.Parallel()
	out, stderr := runChild(t, "admit-catching")
	if want := "admitted while the signals were being caught\n0 <nil>\n"; out != want {
		t.Fatalf("the child said %q, want %q (stderr %q)", out, want, stderr)
	}
}

// TestRunAdmitHearsAnEarlySIGINT: a SIGINT that arrives as soon as the
// build starts waiting for its turn ends the wait, even in a process
// started with SIGINT ignored (a background job, nohup, expectcode), where
// a signal that comes before the catch is dropped by the kernel: the wait
// starts only once the signals are caught.
func TestRunAdmitHearsAnEarlySIGINT(t *testing.T) {
	t.Parallel()
	out, stderr := runChild(t, "admit-interrupt")
	if want := "0 the build was interrupted by interrupt\n"; out != want {
		t.Fatalf("Run ended with %q, want %q (stderr %q)", out, want, stderr)
	}
}

// runChild runs the test binary again in mode and returns what it wrote
// to stdout and stderr; a child that fails fails t.
func runChild(t *testing.T, mode string) (stdout, stderr string) {
	t.Helper()
	argv, env := reexec.Command(t, mode)
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Env = env
	var errBuf bytes.Buffer
	cmd.Stderr = &errBuf
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("child %s: %v, stderr %q", mode, err, errBuf.String())
	}
	return string(out), errBuf.String()
}
