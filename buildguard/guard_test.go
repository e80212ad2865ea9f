//go:build unix

package buildguard

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/buildguard/buildguard/agentproto"
	"github.com/buildguard/buildguard/internal/testsupport/reexec"
	"github.com/buildguard/buildguard/internal/testsupport/wait"
)

// fakeAgent is an in-memory Agent that records what it was sent and answers
// with scripted faults. Network behaviour is covered by the testscript suite
// against the fake agent (harness/fakeagent); this fake isolates the session logic.
type fakeAgent struct {
	mu     sync.Mutex
	sent   []string
	closed bool
	// fail returns the error for the n-th (0-based) BUILD of state, or nil.
	fail func(state string, n int) error
	// hang makes BUILD of these states (a comma list) wait until its
	// context ends.
	hang string
	// sentStarted is closed when BUILD started was sent.
	sentStarted chan struct{}
	// onBuild, when set, runs for each BUILD before it is answered.
	onBuild func(state string)
}

func newFakeAgent() *fakeAgent { return &fakeAgent{sentStarted: make(chan struct{})} }

func (a *fakeAgent) Build(ctx context.Context, state, owner string) error {
	wait, err := a.SendBuild(ctx, state, owner)
	if err != nil {
		return err
	}
	return wait(ctx)
}

// SendBuild records the BUILD and returns the wait for its scripted answer,
// as *agentproto.Conn does.
func (a *fakeAgent) SendBuild(_ context.Context, state, owner string) (func(context.Context) error, error) {
	a.mu.Lock()
	n := 0
	for _, s := range a.sent {
		if strings.HasPrefix(s, state+" ") {
			n++
		}
	}
	a.sent = append(a.sent, state+" owner="+owner)
	if state == agentproto.BuildStarted && n == 0 {
		close(a.sentStarted)
	}
	fail, hang, onBuild := a.fail, a.hang, a.onBuild
	a.mu.Unlock()
	if onBuild != nil {
		onBuild(state)
	}
	return func(ctx context.Context) error {
		if strings.Contains(","+hang+",", ","+state+",") {
			<-ctx.Done()
			return agentproto.ErrTimeout
		}
		if fail != nil {
			return fail(state, n)
		}
		return nil
	}, nil
}

func (a *fakeAgent) Close() error {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.closed = true
	return nil
}

func (a *fakeAgent) states() string {
	a.mu.Lock()
	defer a.mu.Unlock()
	var s []string
	for _, line := range a.sent {
		s = append(s, strings.Fields(line)[0])
	}
	return strings.Join(s, ",")
}

type harness struct {
	agent  *fakeAgent
	cfg    Config
	sigs   chan os.Signal
	stdout bytes.Buffer
	stderr bytes.Buffer
	dials  int
}

// testOwnerLine is the owner line of the tests' guards.
func testOwnerLine(owner string) string { return "owner " + owner }

func newHarness(t *testing.T) *harness {
	h := &harness{agent: newFakeAgent(), sigs: make(chan os.Signal, 4)}
	h.cfg = Config{
		Endpoint:  agentproto.Endpoint{Port: "4000"},
		Owner:     "test-owner",
		Timeout:   2 * time.Second,
		Stdin:     devNull(t),
		Stdout:    &h.stdout,
		Stderr:    &h.stderr,
		OwnerLine: testOwnerLine,
		Signals:   h.sigs,
		Dial: func(ctx context.Context, port int) (Agent, error) {
			h.dials++
			if port != 4000 {
				t.Errorf("dialled port %d, want 4000", port)
			}
			return h.agent, nil
		},
	}
	return h
}

func (h *harness) run(t *testing.T, argv []string, env []string) (int, error) {
	t.Helper()
	h.cfg.Env = env
	g, err := New(h.cfg)
	if err != nil {
		t.Fatal(err)
	}
	code, err := g.Run(context.Background(), argv)
	if !h.agent.closed && h.dials > 0 {
		t.Error("the agent connection was not closed")
	}
	return code, err
}

func TestRunOKSendsStartedThenOK(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	marker := filepath.Join(t.TempDir(), "ran")
	argv, env := reexec.Command(t, "marker", marker)
	code, err := h.run(t, argv, env)
	if err != nil || code != 0 {
		t.Fatalf("Run = %d, %v", code, err)
	}
	if got := h.agent.states(); got != "started,ok" {
		t.Errorf("agent got %s, want started,ok", got)
	}
	if _, err := os.Stat(marker); err != nil {
		t.Errorf("the child did not run: %v", err)
	}
	want := testOwnerLine("test-owner") + "\n"
	if h.stderr.String() != want {
		t.Errorf("stderr = %q, want only the owner line", h.stderr.String())
	}
	if h.stdout.Len() != 0 {
		t.Errorf("stdout = %q, want nothing", h.stdout.String())
	}
}

func TestRunFailedKeepsChildCode(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	argv, env := reexec.Command(t, "exit", "7")
	code, err := h.run(t, argv, env)
	if err != nil || code != 7 {
		t.Fatalf("Run = %d, %v; want 7, nil", code, err)
	}
	if got := h.agent.states(); got != "started,failed" {
		t.Errorf("agent got %s, want started,failed", got)
	}
}

// Exit 0 with a process of the build still running after the grace period
// is not ok: BUILD failed, and the error says how many were left
// (docs/decisions.md#D12).
func TestRunStragglersFailTheBuild(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.cfg.Grace = 100 * time.Millisecond
	code, err := h.run(t, []string{"sh", "-c", "sleep 300 & exit 0"}, nil)
	var se *StragglersError
	if code != 1 || !errors.Is(err, ErrUnsafe) || !errors.As(err, &se) || se.N != 1 {
		t.Fatalf("Run = %d, %v; want 1 and an unsafe build with 1 straggler", code, err)
	}
	if want := "build did not complete safely: 1 processes of the build were still running after it exited"; err.Error() != want {
		t.Errorf("error = %q, want %q", err, want)
	}
	if got := h.agent.states(); got != "started,failed" {
		t.Errorf("agent got %s, want started,failed", got)
	}
}

func TestRunRefusedStartNeverRunsChild(t *testing.T) {
	t.Parallel()
	for name, fault := range map[string]error{
		"rejected":     agentproto.ErrRejected,
		"timeout":      agentproto.ErrTimeout,
		"disconnected": agentproto.ErrDisconnected,
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			h := newHarness(t)
			h.agent.fail = func(state string, n int) error {
				if state == agentproto.BuildStarted {
					return fault
				}
				return nil
			}
			marker := filepath.Join(t.TempDir(), "ran")
			argv, env := reexec.Command(t, "marker", marker)
			_, err := h.run(t, argv, env)
			if !errors.Is(err, ErrRefused) || !errors.Is(err, fault) {
				t.Fatalf("err = %v, want ErrRefused wrapping %v", err, fault)
			}
			wantFix := map[string]Fix{"rejected": FixOwner, "timeout": FixAckTimeout, "disconnected": FixRetry}[name]
			checkRefusal(t, err, wantFix)
			if _, err := os.Stat(marker); !errors.Is(err, os.ErrNotExist) {
				t.Errorf("the child ran: %v", err)
			}
			// Unless the agent rejected the hold, it may have taken it
			// without its acknowledgement arriving: BUILD failed follows
			// (docs/decisions.md#D21). A rejection is asked again until
			// handoverWait has passed, and owes nothing.
			got := h.agent.states()
			if fault == agentproto.ErrRejected {
				if n := strings.Count(got, "started"); n < 2 || strings.Contains(got, "failed") || strings.Contains(got, "ok") {
					t.Errorf("agent got %s, want BUILD started asked again after the rejection and nothing else", got)
				}
			} else if got != "started,failed" {
				t.Errorf("agent got %s, want started,failed", got)
			}
		})
	}
}

// TestRunWaitsForTheHandover: the agent releases a hold asynchronously
// after it acknowledged `BUILD ok` and rejects every other owner's
// `started` until then (docs/agent-protocol.md#5); the build whose turn has
// just come asks again instead of being refused (docs/decisions.md#D18).
func TestRunWaitsForTheHandover(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.agent.fail = func(state string, n int) error {
		if state == agentproto.BuildStarted && n < 3 {
			return agentproto.ErrRejected
		}
		return nil
	}
	marker := filepath.Join(t.TempDir(), "ran")
	argv, env := reexec.Command(t, "marker", marker)
	code, err := h.run(t, argv, env)
	if err != nil || code != 0 {
		t.Fatalf("Run = %d, %v; want 0, nil after the hand-over", code, err)
	}
	if _, err := os.Stat(marker); err != nil {
		t.Errorf("the child did not run: %v", err)
	}
	if got := h.agent.states(); got != "started,started,started,started,ok" {
		t.Errorf("agent got %s, want three rejected starts, the accepted one, then ok", got)
	}
}

// TestRunSignalWhileAskingAgain: a Ctrl-C while a rejected BUILD started
// is asked again (the hand-over wait, docs/decisions.md#D18) ends the wait
// at once as an interruption: the child never runs, and nothing is owed to
// the agent, which took no hold.
func TestRunSignalWhileAskingAgain(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	asked := make(chan struct{}, 64)
	h.agent.fail = func(state string, n int) error {
		if state != agentproto.BuildStarted {
			return nil
		}
		asked <- struct{}{}
		return agentproto.ErrRejected
	}
	marker := filepath.Join(t.TempDir(), "ran")
	argv, env := reexec.Command(t, "marker", marker)
	go func() {
		<-asked
		<-asked // asked again: the signal comes during the hand-over wait
		h.sigs <- syscall.SIGINT
	}()
	h.runInterrupted(t, argv, env, marker)
	if got := h.agent.states(); strings.Contains(got, "failed") || strings.Contains(got, "ok") {
		t.Errorf("agent got %s, want only the rejected starts", got)
	}
}

// runInterrupted runs argv, which touches marker, and expects Run to end
// interrupted by SIGINT (exit 130) before argv ran.
func (h *harness) runInterrupted(t *testing.T, argv, env []string, marker string) {
	t.Helper()
	_, err := h.run(t, argv, env)
	var ie *InterruptedError
	if !errors.As(err, &ie) || ie.ExitCode() != 130 {
		t.Fatalf("err = %v, want an interruption with exit 130", err)
	}
	if _, err := os.Stat(marker); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the child ran: %v", err)
	}
}

func TestRunRefusedBeforeConnecting(t *testing.T) {
	t.Parallel()
	fixes := map[string]Fix{"invalid port": FixPort, "no port file": FixPortFile, "nothing to discover": FixDiscovery, "timeout high": FixTimeout, "timeout below": FixTimeout}
	for name, mutate := range map[string]func(*Config){
		"invalid port":        func(c *Config) { c.Endpoint.Port = "65536" },
		"no port file":        func(c *Config) { c.Endpoint = agentproto.Endpoint{PortFile: filepath.Join(t.TempDir(), "none")} },
		"nothing to discover": func(c *Config) { c.Endpoint = agentproto.Endpoint{Base: t.TempDir()} },
		"timeout high":        func(c *Config) { c.Timeout = 60001 * time.Millisecond },
		"timeout below":       func(c *Config) { c.Timeout = time.Microsecond },
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			h := newHarness(t)
			mutate(&h.cfg)
			_, err := h.run(t, []string{"true"}, nil)
			if !errors.Is(err, ErrRefused) {
				t.Fatalf("err = %v, want ErrRefused", err)
			}
			checkRefusal(t, err, fixes[name])
			if h.dials != 0 {
				t.Errorf("dialled %d times, want none", h.dials)
			}
			if !strings.HasPrefix(h.stderr.String(), testOwnerLine("test-owner")+"\n") {
				t.Errorf("stderr = %q, want the owner line first", h.stderr.String())
			}
		})
	}
}

func TestNewRejectsInvalidOwner(t *testing.T) {
	t.Parallel()
	for _, owner := range []string{"a b", "x/y", strings.Repeat("a", 65), "ü"} {
		if _, err := New(Config{Owner: owner}); !errors.Is(err, ErrInvalidOwner) || strings.Contains(err.Error(), owner) {
			t.Errorf("owner %q: err = %v, want ErrInvalidOwner without the value", owner, err)
		}
	}
	g, err := New(Config{})
	if err != nil || len(g.Owner()) != 36 || !agentproto.ValidToken(g.Owner()) {
		t.Errorf("fresh owner = %q, %v", g.Owner(), err)
	}
}

func TestRunLaunchFailureSendsFailed(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	code, err := h.run(t, []string{filepath.Join(t.TempDir(), "no such build")}, nil)
	if !errors.Is(err, ErrCannotRun) || code != 127 {
		t.Fatalf("Run = %d, %v; want 127, ErrCannotRun", code, err)
	}
	if got := h.agent.states(); got != "started,failed" {
		t.Errorf("agent got %s, want started,failed", got)
	}
}

func TestRunLostOKAckIsUnsafeAndSaysFailed(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.agent.hang = agentproto.BuildOK
	h.cfg.Timeout = 50 * time.Millisecond
	argv, env := reexec.Command(t, "exit", "0")
	code, err := h.run(t, argv, env)
	if !errors.Is(err, ErrUnsafe) || code != 1 {
		t.Fatalf("Run = %d, %v; want 1, ErrUnsafe", code, err)
	}
	if got := h.agent.states(); got != "started,ok,failed" {
		t.Errorf("agent got %s, want started,ok,failed", got)
	}
	if strings.Contains(err.Error(), "test-owner") {
		t.Errorf("the error shows the owner: %v", err)
	}
	// The state that was not confirmed, in no front's words: each says how
	// its users rerun with the owner.
	var ue *UnconfirmedError
	if !errors.As(err, &ue) || ue.State != agentproto.BuildOK || strings.Contains(err.Error(), "--") {
		t.Errorf("err = %v (%T), want an unconfirmed BUILD ok naming no flag", err, err)
	}
}

func TestRunRejectedFailedIsUnsafe(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.agent.fail = func(state string, n int) error {
		if state == agentproto.BuildFailed {
			return agentproto.ErrRejected
		}
		return nil
	}
	argv, env := reexec.Command(t, "exit", "3")
	if code, err := h.run(t, argv, env); !errors.Is(err, ErrUnsafe) || code != 1 {
		t.Fatalf("Run = %d, %v; want 1, ErrUnsafe", code, err)
	}
}

// interruptWhileRunning starts a sleeper child (which may ignore signals),
// sends sig once it runs, and returns Run's result and the child's pids.
func interruptWhileRunning(t *testing.T, h *harness, sig syscall.Signal, ignore bool) (int, []int, error) {
	t.Helper()
	pidFile := filepath.Join(t.TempDir(), "pids")
	args := []string{pidFile}
	if ignore {
		args = append(args, "ignore")
	}
	argv, env := reexec.Command(t, "sleeper", args...)
	type result struct {
		code int
		err  error
	}
	done := make(chan result, 1)
	go func() {
		code, err := h.run(t, argv, env)
		done <- result{code, err}
	}()
	pids := wait.PIDFile(t, 20*time.Second, pidFile)
	h.sigs <- sig
	select {
	case res := <-done:
		return res.code, pids, res.err
	case <-time.After(30 * time.Second):
		t.Fatal("Run did not return after the signal")
	}
	return 0, nil, nil
}

func TestRunSignalStopsChildAndSendsFailed(t *testing.T) {
	t.Parallel()
	for _, sig := range []syscall.Signal{syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP} {
		t.Run(sig.String(), func(t *testing.T) {
			t.Parallel()
			h := newHarness(t)
			code, pids, err := interruptWhileRunning(t, h, sig, false)
			var ie *InterruptedError
			if !errors.As(err, &ie) || ie.Signal != sig || ie.Err != nil {
				t.Fatalf("Run = %d, %v; want a confirmed interruption by %v", code, err, sig)
			}
			if ie.ExitCode() != 128+int(sig) {
				t.Errorf("ExitCode = %d, want %d", ie.ExitCode(), 128+int(sig))
			}
			if got := h.agent.states(); got != "started,failed" {
				t.Errorf("agent got %s, want started,failed", got)
			}
			for _, pid := range pids {
				wait.Gone(t, 10*time.Second, pid)
			}
		})
	}
}

func TestRunGraceExpiryKillsStubbornChild(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.cfg.Grace = 100 * time.Millisecond
	code, pids, err := interruptWhileRunning(t, h, syscall.SIGTERM, true)
	var ie *InterruptedError
	if !errors.As(err, &ie) || ie.ExitCode() != 143 {
		t.Fatalf("Run = %d, %v; want an interruption with exit 143", code, err)
	}
	if code != 128+int(syscall.SIGKILL) {
		t.Errorf("child code = %d, want 137 (killed after the grace period)", code)
	}
	if got := h.agent.states(); got != "started,failed" {
		t.Errorf("agent got %s, want started,failed", got)
	}
	for _, pid := range pids {
		wait.Gone(t, 10*time.Second, pid)
	}
}

func TestRunSignalBeforeAckRunsNoChild(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.agent.hang = agentproto.BuildStarted
	h.cfg.Timeout = time.Minute
	marker := filepath.Join(t.TempDir(), "ran")
	argv, env := reexec.Command(t, "marker", marker)
	go func() {
		<-h.agent.sentStarted
		h.sigs <- syscall.SIGINT
	}()
	h.runInterrupted(t, argv, env, marker)
	// The agent may have taken the hold without its acknowledgement
	// arriving: BUILD failed follows (docs/decisions.md#D21).
	if got := h.agent.states(); got != "started,failed" {
		t.Errorf("agent got %s, want started,failed", got)
	}
}

// A cancellation while BUILD started awaits its acknowledgement runs no
// command and still ends with BUILD failed (docs/decisions.md#D21).
func TestRunCancelBeforeAckSendsFailed(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.agent.hang = agentproto.BuildStarted
	h.cfg.Timeout = time.Minute
	marker := filepath.Join(t.TempDir(), "ran")
	argv, env := reexec.Command(t, "marker", marker)
	h.cfg.Env = env
	g, err := New(h.cfg)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		<-h.agent.sentStarted
		cancel()
	}()
	_, err = g.Run(ctx, argv)
	if !errors.Is(err, ErrRefused) {
		t.Fatalf("err = %v, want a refusal", err)
	}
	if _, err := os.Stat(marker); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the child ran: %v", err)
	}
	if got := h.agent.states(); got != "started,failed" {
		t.Errorf("agent got %s, want started,failed", got)
	}
	if !strings.Contains(err.Error(), "then BUILD failed was acknowledged") {
		t.Errorf("err %q does not say BUILD failed was acknowledged", err)
	}
}

// A cancellation that arrives while BUILD ok is being acknowledged did not
// end the build: the agent released its output, and Run says so instead of
// reporting a cancelled build (docs/decisions.md#D21).
func TestRunCancelDuringOKAckIsOK(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	argv, env := reexec.Command(t, "exit", "0")
	h.cfg.Env = env
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	h.agent.onBuild = func(state string) {
		if state == agentproto.BuildOK {
			cancel()
		}
	}
	g, err := New(h.cfg)
	if err != nil {
		t.Fatal(err)
	}
	code, err := g.Run(ctx, argv)
	if code != 0 || err != nil {
		t.Fatalf("Run = %d, %v; want 0, nil: BUILD ok was acknowledged", code, err)
	}
	if got := h.agent.states(); got != "started,ok" {
		t.Errorf("agent got %s, want started,ok", got)
	}
}

// A signal that arrives after the hold was acknowledged but before the
// command started (here: while its runner is made) still means no command:
// the hold is reported failed and nothing runs.
func TestRunSignalAfterAckBeforeStartRunsNoChild(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	marker := filepath.Join(t.TempDir(), "ran")
	argv, env := reexec.Command(t, "marker", marker)
	h.cfg.NewRunner = func(c Command) Runner {
		h.sigs <- syscall.SIGTERM
		return NewExecRunner(c)
	}
	_, err := h.run(t, argv, env)
	var ie *InterruptedError
	if !errors.As(err, &ie) || ie.ExitCode() != 143 || ie.Ran {
		t.Fatalf("err = %#v, want an interruption before the command ran, exit 143", err)
	}
	if _, err := os.Stat(marker); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the child ran: %v", err)
	}
	if got := h.agent.states(); got != "started,failed" {
		t.Errorf("agent got %s, want started,failed", got)
	}
}

func TestRunContextCancelStopsChild(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	pidFile := filepath.Join(t.TempDir(), "pids")
	argv, env := reexec.Command(t, "sleeper", pidFile)
	h.cfg.Env = env
	g, err := New(h.cfg)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		wait.File(t, 20*time.Second, pidFile)
		cancel()
	}()
	_, err = g.Run(ctx, argv)
	var ie *InterruptedError
	if !errors.As(err, &ie) || ie.Signal != nil || !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v, want a cancellation", err)
	}
	if got := h.agent.states(); got != "started,failed" {
		t.Errorf("agent got %s, want started,failed", got)
	}
}

// drainingAgent is a fakeAgent that also records its Discard periods, as
// *agentproto.Conn reads the agent's broadcasts while the command runs.
type drainingAgent struct {
	*fakeAgent
	events chan string
}

func (a *drainingAgent) Discard(ctx context.Context) error {
	a.events <- "discard"
	<-ctx.Done()
	a.events <- "discard stopped"
	return nil
}

func (a *drainingAgent) Build(ctx context.Context, state, owner string) error {
	a.events <- "build " + state
	return a.fakeAgent.Build(ctx, state, owner)
}

func (a *drainingAgent) SendBuild(ctx context.Context, state, owner string) (func(context.Context) error, error) {
	a.events <- "build " + state
	return a.fakeAgent.SendBuild(ctx, state, owner)
}

// While the command runs the connection is read (so the agent's bounded
// outbox cannot fill with broadcasts), and reading stops before the finish.
func TestRunDrainsTheAgentWhileTheCommandRuns(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	a := &drainingAgent{fakeAgent: h.agent, events: make(chan string, 16)}
	h.cfg.Dial = func(ctx context.Context, port int) (Agent, error) { h.dials++; return a, nil }
	argv, env := reexec.Command(t, "marker", filepath.Join(t.TempDir(), "ran"))
	if code, err := h.run(t, argv, env); err != nil || code != 0 {
		t.Fatalf("Run = %d, %v", code, err)
	}
	close(a.events)
	var got []string
	for e := range a.events {
		got = append(got, e)
	}
	if want := "build started,discard,discard stopped,build ok"; strings.Join(got, ",") != want {
		t.Errorf("events %q, want %s", got, want)
	}
}

// Run releases the process's signals when it returns, unless KeepSignals
// says the process is about to exit: a SIGTERM after Run then ends the
// process as it would without Run, or is dropped.
func TestRunReleasesSignalsUnlessKept(t *testing.T) {
	for _, keep := range []bool{false, true} {
		mode := map[bool]string{false: "release", true: "keep"}[keep]
		t.Run(mode, func(t *testing.T) {
			argv, env := reexec.Command(t, "guard", mode)
			cmd := exec.Command(argv[0], argv[1:]...)
			cmd.Env = env
			var stderr bytes.Buffer
			cmd.Stderr = &stderr
			out, err := cmd.Output()
			ws := cmd.ProcessState.Sys().(syscall.WaitStatus)
			if keep {
				if err != nil || string(out) != "survived\n" {
					t.Fatalf("with KeepSignals the process ended (%v), stdout %q, stderr %q; want it to survive the SIGTERM", err, out, stderr.String())
				}
				return
			}
			if !ws.Signaled() || ws.Signal() != syscall.SIGTERM {
				t.Fatalf("without KeepSignals the process ended with %v, stdout %q, stderr %q; want it killed by the SIGTERM", err, out, stderr.String())
			}
		})
	}
}

// checkRefusal requires err to be a *RefusalError with fix, whose text
// names no flag and no tool argument: each front words the fix for its own
// users.
func checkRefusal(t *testing.T, err error, fix Fix) {
	t.Helper()
	var r *RefusalError
	if !errors.As(err, &r) || r.Fix != fix {
		t.Errorf("err = %v (%T), want a refusal with fix %d", err, err, fix)
		return
	}
	if strings.Contains(err.Error(), "--") {
		t.Errorf("the core words a flag: %q", err)
	}
	for _, arg := range toolArguments {
		if strings.Contains(err.Error(), arg) {
			t.Errorf("the core words the tool argument %s: %q", arg, err)
		}
	}
	if got := (Advice{fix: "ADVICE"}).Word(err); !strings.Contains(got, "; ADVICE") {
		t.Errorf("advice not worded in: %q", got)
	}
}

// TestOptionsAreStructured: the options' usage errors name the setting,
// their refusals the fix, and neither names a flag.
func TestOptionsAreStructured(t *testing.T) {
	t.Parallel()
	s := func(v string) *string { return &v }
	for _, c := range []struct {
		name    string
		o       Options
		setting Setting // a usage error in this setting
		fix     Fix     // else a refusal with this fix
	}{
		{"bad owner", Options{Owner: s("bad owner")}, SettingOwner, 0},
		{"empty owner", Options{Owner: s("")}, SettingOwner, 0},
		{"bad grace", Options{Grace: s("soon")}, SettingGrace, 0},
		{"blank port", Options{Port: s(" ")}, "", FixPort},
		{"empty port file", Options{PortFile: s("")}, "", FixPortFile},
		{"timeout not a number", Options{TimeoutMs: s("x")}, "", FixTimeout},
		{"timeout too high", Options{TimeoutMs: s("60001")}, "", FixTimeout},
	} {
		cfg, err := c.o.Config()
		if c.setting != "" {
			var oe *OptionError
			if !errors.As(err, &oe) || oe.Setting != c.setting || strings.Contains(err.Error(), "--") {
				t.Errorf("%s: err = %v, want a usage error in %s naming no flag", c.name, err, c.setting)
			}
			continue
		}
		if err != nil || cfg.refusal == nil {
			t.Errorf("%s: Config = %v, refusal %v; want a refusal", c.name, err, cfg.refusal)
			continue
		}
		checkRefusal(t, cfg.refusal, c.fix)
	}
	if cfg, err := (Options{}).Config(); err != nil || cfg.refusal != nil {
		t.Errorf("no options: %v, %v", err, cfg.refusal)
	}
}

// After an interrupt, the wrapper says what it waits for, and a second
// interrupt ends that wait at once, whatever the agent does: exit 128 plus
// the second signal, and the error says the agent may still hold the output
// (docs/decisions.md#D23). The agent was still told how the build ended.
func TestRunSecondInterruptEndsTheWait(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name   string
		hang   string
		child  string // "marker" (exit 0), or "stubborn" (ignores signals)
		states string
		state  string // the BUILD state whose wait the second interrupt ended
		waited bool   // whether the wait was announced
	}{
		{name: "BUILD failed after an interrupt before the ack", hang: "started,failed", child: "marker", states: "started,failed", state: "failed", waited: true},
		{name: "the grace period of a command that ignores the interrupt", child: "stubborn", states: "started,failed", state: "failed"},
		{name: "BUILD ok interrupted twice", hang: "ok", child: "marker", states: "started,ok,failed", state: "ok", waited: true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			h := newHarness(t)
			h.agent.hang = tc.hang
			h.cfg.Timeout = time.Minute
			h.cfg.Grace = time.Hour
			h.cfg.WaitLine = func(w Wait) string { return fmt.Sprintf("waiting up to %v for BUILD %s", w.Limit, w.State) }
			dir := t.TempDir()
			var argv, env []string
			switch tc.child {
			case "marker":
				argv, env = reexec.Command(t, "marker", filepath.Join(dir, "ran"))
			default:
				argv, env = reexec.Command(t, "sleeper", filepath.Join(dir, "pids"), "ignore")
			}
			h.agent.onBuild = func(state string) {
				switch {
				case state == agentproto.BuildStarted && tc.hang == "started,failed":
					h.sigs <- syscall.SIGINT
				case state == agentproto.BuildFailed && tc.hang == "started,failed":
					h.sigs <- syscall.SIGTERM
				case state == agentproto.BuildOK:
					h.sigs <- syscall.SIGINT
					h.sigs <- syscall.SIGTERM
				}
			}
			type result struct {
				code int
				err  error
			}
			done := make(chan result, 1)
			go func() {
				code, err := h.run(t, argv, env)
				done <- result{code, err}
			}()
			var pids []int
			if tc.child == "stubborn" {
				pids = wait.PIDFile(t, 20*time.Second, filepath.Join(dir, "pids"))
				h.sigs <- syscall.SIGINT
				h.sigs <- syscall.SIGTERM
			}
			var res result
			select {
			case res = <-done:
			case <-time.After(30 * time.Second):
				t.Fatal("Run did not return after the second interrupt")
			}
			var ie *InterruptedError
			var ab *AbandonedError
			if !errors.As(res.err, &ie) || ie.ExitCode() != 143 || !errors.As(res.err, &ab) {
				t.Fatalf("Run = %d, %v; want an interruption ended by the second signal, exit 143", res.code, res.err)
			}
			if ab.State != tc.state || !ab.Sent || ab.Signal != syscall.SIGTERM {
				t.Errorf("abandoned %+v, want BUILD %s sent and its wait ended by SIGTERM", ab, tc.state)
			}
			if !strings.Contains(ab.Error(), "may still hold the output") {
				t.Errorf("%q does not say the output may stay held", ab.Error())
			}
			if got := h.agent.states(); got != tc.states {
				t.Errorf("agent got %s, want %s", got, tc.states)
			}
			line := fmt.Sprintf("waiting up to 1m0s for BUILD %s", tc.state)
			if got := strings.Contains(h.stderr.String(), line); got != tc.waited {
				t.Errorf("stderr %q: has %q = %v, want %v", h.stderr.String(), line, got, tc.waited)
			}
			for _, pid := range pids {
				wait.Gone(t, 10*time.Second, pid)
			}
		})
	}
}
