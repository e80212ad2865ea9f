//go:build unix

package buildguard

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/buildguard/buildguard/agentproto"
	"github.com/buildguard/buildguard/harness/fakeagent"
	"github.com/buildguard/buildguard/integrations/gradle"
	"github.com/buildguard/buildguard/internal/testsupport/reexec"
)

// planEnv lists the fake Gradle's cycles, comma-separated: ok and failed
// end with that finish line; die closes the connection after the ack (the
// Gradle JVM died); hang waits after the ack until it is killed.
const planEnv = "BUILDGUARD_TEST_PLAN"

// fakeGradle plays a continuous Gradle build with the cycle init script
// applied: it checks that the wrapper applied the script, the channel and
// the configuration-cache switch, then runs the cycles of its plan over the
// channel, printing every answer. Like Gradle 4.4.1 in a build with a
// buildSrc (docs/decisions.md#D20), it ends the continuous build (exit 1)
// when a cycle was not acknowledged.
func fakeGradle(args []string) int {
	var channel string
	applied := 0
	for i, a := range args {
		switch {
		case strings.HasPrefix(a, "-Pbuildguard.cycleChannel="):
			channel = strings.TrimPrefix(a, "-Pbuildguard.cycleChannel=")
			applied++
		case a == "--init-script" && i+1 < len(args):
			if b, err := os.ReadFile(args[i+1]); err == nil && bytes.Equal(b, gradle.CyclesInitScript) {
				applied++
			}
		case a == "-Dorg.gradle.configuration-cache=false":
			applied++
		}
	}
	if applied != 3 {
		fmt.Printf("fake gradle: init script, channel or configuration-cache switch missing: %q\n", args)
		return 90
	}
	fmt.Printf("channel %s\n", channel)
	props, err := os.ReadFile(channel)
	if err != nil {
		fmt.Println("fake gradle:", err)
		return 91
	}
	var port, secret string
	for _, l := range strings.Split(string(props), "\n") {
		if v, ok := strings.CutPrefix(l, "port="); ok {
			port = v
		}
		if v, ok := strings.CutPrefix(l, "secret="); ok {
			secret = v
		}
	}
	for i, step := range strings.Split(os.Getenv(planEnv), ",") {
		n := i + 1
		nc, err := net.DialTimeout("tcp", "127.0.0.1:"+port, 10*time.Second)
		if err != nil {
			fmt.Println("fake gradle:", err)
			return 92
		}
		nc.SetDeadline(time.Now().Add(60 * time.Second))
		fmt.Fprintf(nc, "buildguard-cycle 1 %s start\n", secret)
		br := bufio.NewReader(nc)
		ans, err := br.ReadString('\n')
		if err != nil {
			ans = "EOF\n"
		}
		fmt.Printf("cycle %d: %s", n, ans)
		if !strings.HasPrefix(ans, "ack ") {
			nc.Close()
			return 1
		}
		switch step {
		case "ok", "failed":
			fmt.Fprintf(nc, "finish %s\n", step)
			ans, err = br.ReadString('\n')
			if err != nil {
				ans = "EOF\n"
			}
			fmt.Printf("cycle %d end: %s", n, ans)
		case "hang":
			fmt.Printf("cycle %d running\n", n)
			time.Sleep(300 * time.Second)
		}
		nc.Close()
	}
	return 0
}

// watcher is an io.Writer whose lines a test can wait for.
type watcher struct {
	mu      sync.Mutex
	buf     bytes.Buffer
	changed chan struct{}
}

func newWatcher() *watcher { return &watcher{changed: make(chan struct{})} }

func (w *watcher) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.buf.Write(p)
	close(w.changed)
	w.changed = make(chan struct{})
	return len(p), nil
}

func (w *watcher) String() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.buf.String()
}

// wait waits up to 30 s until the output contains s.
func (w *watcher) wait(t *testing.T, s string) {
	t.Helper()
	deadline := time.NewTimer(30 * time.Second)
	defer deadline.Stop()
	for {
		w.mu.Lock()
		found, changed := strings.Contains(w.buf.String(), s), w.changed
		w.mu.Unlock()
		if found {
			return
		}
		select {
		case <-changed:
		case <-deadline.C:
			t.Fatalf("no %q in the output within 30 s:\n%s", s, w.String())
		}
	}
}

type continuousHarness struct {
	agent   *fakeagent.Server
	cfg     Config
	sigs    chan os.Signal
	stdout  *watcher
	stderr  bytes.Buffer
	reports []CycleReport
	argv    []string
}

func newContinuousHarness(t testing.TB, plan string, opts ...fakeagent.Option) *continuousHarness {
	t.Helper()
	gradleCmd := filepath.Join(t.TempDir(), "gradle")
	if err := os.Symlink(reexec.Binary(t), gradleCmd); err != nil {
		t.Fatal(err)
	}
	h := &continuousHarness{
		agent:  fakeagent.NewServer(t, opts...),
		sigs:   make(chan os.Signal, 4),
		stdout: newWatcher(),
		argv:   []string{gradleCmd, "--continuous", "classes"},
	}
	h.cfg = Config{
		Endpoint:  agentproto.Endpoint{Port: strconv.Itoa(h.agent.Port())},
		Owner:     "cycle-owner",
		Timeout:   5 * time.Second,
		Grace:     5 * time.Second,
		Stdin:     devNull(t),
		Stdout:    h.stdout,
		Stderr:    &h.stderr,
		OwnerLine: testOwnerLine,
		Signals:   h.sigs,
		Env:       append(os.Environ(), reexec.Env("gradle-cycles"), planEnv+"="+plan),
	}
	return h
}

func (h *continuousHarness) run(t *testing.T) (ContinuousRun, int, error) {
	t.Helper()
	g, err := New(h.cfg)
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	run, code, err := g.RunContinuous(context.Background(), h.argv, func(r CycleReport) {
		mu.Lock()
		h.reports = append(h.reports, r)
		mu.Unlock()
	})
	mu.Lock()
	defer mu.Unlock()
	return run, code, err
}

// builds is the agent's BUILD states in arrival order.
func (h *continuousHarness) builds() string {
	var s []string
	for _, l := range h.agent.Commands() {
		if f := strings.Fields(l); len(f) > 1 && f[0] == "BUILD" {
			s = append(s, f[1])
		}
	}
	return strings.Join(s, ",")
}

// outcomes is the reports as "N:outcome:released|held".
func (h *continuousHarness) outcomes() string {
	var s []string
	for _, r := range h.reports {
		rel := "held"
		if r.Released {
			rel = "released"
		}
		s = append(s, fmt.Sprintf("%d:%v:%s", r.N, r.Outcome, rel))
	}
	return strings.Join(s, ",")
}

// TestRunContinuousCycles: every cycle is one guarded build on the run's
// one connection: started acknowledged before the script is let go, then ok
// for a good cycle, failed for a failing one and for one whose Gradle JVM
// died, and the output released only by a good cycle. The channel's files
// are gone after the run.
func TestRunContinuousCycles(t *testing.T) {
	h := newContinuousHarness(t, "ok,failed,die,ok")
	run, code, err := h.run(t)
	if err != nil || code != 0 {
		t.Fatalf("RunContinuous = %d, %v; want 0, nil\nstdout:\n%s\nstderr:\n%s", code, err, h.stdout, &h.stderr)
	}
	if got, want := h.builds(), "started,ok,started,failed,started,failed,started,ok"; got != want {
		t.Errorf("agent got BUILD %s, want %s", got, want)
	}
	if got, want := h.outcomes(), "1:ok:released,2:failed:held,3:failed:held,4:ok:released"; got != want {
		t.Errorf("reports %s, want %s", got, want)
	}
	if run != (ContinuousRun{Cycles: 4, Held: false}) {
		t.Errorf("run = %+v, want 4 cycles, nothing held", run)
	}
	out := h.stdout.String()
	for _, want := range []string{"cycle 1: ack 1\n", "cycle 1 end: released 1\n", "cycle 2 end: held 2\n", "cycle 3: ack 3\n", "cycle 4 end: released 4\n"} {
		if !strings.Contains(out, want) {
			t.Errorf("the script did not read %q:\n%s", want, out)
		}
	}
	conns := 0
	for _, cmds := range h.agent.ConnCommands() {
		if len(cmds) > 0 {
			conns++
		}
	}
	if conns != 1 {
		t.Errorf("BUILD commands came on %d connections, want one for the run", conns)
	}
	if holding, _ := h.agent.Hold(); holding {
		t.Error("the agent still holds after the last good cycle")
	}
	if !strings.HasPrefix(h.stderr.String(), testOwnerLine("cycle-owner")+"\n") {
		t.Errorf("stderr does not start with the owner line:\n%s", &h.stderr)
	}
	channel := strings.TrimSpace(strings.TrimPrefix(strings.SplitN(out, "\n", 2)[0], "channel "))
	if _, err := os.Stat(filepath.Dir(channel)); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the channel directory %s is left after the run: %v", filepath.Dir(channel), err)
	}
}

// TestRunContinuousRefusedCycle: a cycle whose BUILD started the agent
// keeps rejecting (longer than a hand-over lasts) is refused to the script
// (which fails it before its tasks; the fake Gradle then ends the
// continuous build); nothing is released for it.
func TestRunContinuousRefusedCycle(t *testing.T) {
	var starts atomic.Int32
	h := newContinuousHarness(t, "ok,ok", fakeagent.WithFaults(fakeagent.Faults{
		RejectBuild: func(state, _ string) bool {
			return state == agentproto.BuildStarted && starts.Add(1) >= 2
		},
	}))
	run, code, err := h.run(t)
	if err != nil || code != 1 {
		t.Fatalf("RunContinuous = %d, %v; want 1 (Gradle's exit), nil\nstdout:\n%s", code, err, h.stdout)
	}
	if got := h.builds(); !strings.HasPrefix(got, "started,ok,started,started") || strings.Count(got, ",ok") != 1 || strings.Contains(got, "failed") {
		t.Errorf("agent got BUILD %s, want started,ok then the rejected start asked again and nothing else", got)
	}
	if got, want := h.outcomes(), "1:ok:released,2:refused:held"; got != want {
		t.Errorf("reports %s, want %s", got, want)
	}
	if r := h.reports[1]; !errors.Is(r.Err, ErrRefused) || !errors.Is(r.Err, agentproto.ErrRejected) {
		t.Errorf("refused cycle's error %v, want ErrRefused wrapping the rejection", r.Err)
	}
	if !strings.Contains(h.stdout.String(), "cycle 2: refused cycle 2: build refused: BUILD started was not acknowledged") {
		t.Errorf("the script was not told why:\n%s", h.stdout)
	}
	if run.Held {
		t.Error("run reports output held; the refused cycle took no hold")
	}
}

// TestRunContinuousLostStartAck: a cycle whose BUILD started took the
// hold but whose acknowledgement never came is refused, and BUILD failed
// follows on the same connection (docs/decisions.md#D21): the output
// counts as held, and the run does not exit 0.
func TestRunContinuousLostStartAck(t *testing.T) {
	var starts atomic.Int32
	h := newContinuousHarness(t, "ok,ok", fakeagent.WithFaults(fakeagent.Faults{
		Reply: func(r *fakeagent.Reply) {
			if r.State == agentproto.BuildStarted && starts.Add(1) == 2 {
				r.Drop = true
			}
		},
	}))
	h.cfg.Timeout = 300 * time.Millisecond
	run, code, err := h.run(t)
	if err != nil || code != 1 {
		t.Fatalf("RunContinuous = %d, %v; want 1 (Gradle's exit), nil\nstdout:\n%s", code, err, h.stdout)
	}
	if got, want := h.builds(), "started,ok,started,failed"; got != want {
		t.Errorf("agent got BUILD %s, want %s", got, want)
	}
	if got, want := h.outcomes(), "1:ok:released,2:refused:held"; got != want {
		t.Errorf("reports %s, want %s", got, want)
	}
	var rerr *RefusalError
	if !errors.As(h.reports[1].Err, &rerr) || !strings.Contains(rerr.After, "BUILD failed was acknowledged") {
		t.Errorf("refused cycle's error %v, want it to say BUILD failed was acknowledged", h.reports[1].Err)
	}
	if !run.Held {
		t.Error("run reports no output held; the agent may hold it for the lost start")
	}
	if holding, owner := h.agent.Hold(); !holding || owner != "cycle-owner" {
		t.Errorf("agent hold = %v %q, want held for cycle-owner", holding, owner)
	}
}

// TestRunContinuousCycleWaitsForTheHandover: a cycle whose BUILD started
// is rejected while the hold before it is still being released
// (docs/agent-protocol.md#5) asks again and runs (docs/decisions.md#D18).
func TestRunContinuousCycleWaitsForTheHandover(t *testing.T) {
	var starts atomic.Int32
	h := newContinuousHarness(t, "ok,ok", fakeagent.WithFaults(fakeagent.Faults{
		RejectBuild: func(state, _ string) bool {
			n := starts.Add(1)
			return state == agentproto.BuildStarted && (n == 3 || n == 4)
		},
	}))
	run, code, err := h.run(t)
	if err != nil || code != 0 {
		t.Fatalf("RunContinuous = %d, %v; want 0, nil\nstdout:\n%s", code, err, h.stdout)
	}
	if got, want := h.builds(), "started,ok,started,started,started,ok"; got != want {
		t.Errorf("agent got BUILD %s, want %s", got, want)
	}
	if got, want := h.outcomes(), "1:ok:released,2:ok:released"; got != want {
		t.Errorf("reports %s, want %s", got, want)
	}
	if run.Held {
		t.Error("run reports output held after two good cycles")
	}
}

// TestRunContinuousInterruptedMidCycle: a signal while a cycle runs ends
// the command's process group, and the cycle ends with BUILD failed,
// acknowledged: the output stays held.
func TestRunContinuousInterruptedMidCycle(t *testing.T) {
	h := newContinuousHarness(t, "ok,hang")
	type result struct {
		run  ContinuousRun
		code int
		err  error
	}
	done := make(chan result, 1)
	go func() {
		run, code, err := h.run(t)
		done <- result{run, code, err}
	}()
	h.stdout.wait(t, "cycle 2 running")
	h.sigs <- syscall.SIGINT
	var res result
	select {
	case res = <-done:
	case <-time.After(60 * time.Second):
		t.Fatal("the run did not end within 60 s of SIGINT")
	}
	var ie *InterruptedError
	if !errors.As(res.err, &ie) || ie.Signal != syscall.SIGINT || !ie.Ran || ie.Err != nil {
		t.Fatalf("RunContinuous error = %v, want interrupted by SIGINT with everything confirmed", res.err)
	}
	if got, want := h.builds(), "started,ok,started,failed"; got != want {
		t.Errorf("agent got BUILD %s, want %s", got, want)
	}
	// The cycle ends as stopped, or as failed when the killed command's
	// connection ended before the run did.
	if got := h.outcomes(); got != "1:ok:released,2:stopped:held" && got != "1:ok:released,2:failed:held" {
		t.Errorf("reports %s, want cycle 1 released and cycle 2 stopped or failed, held", got)
	}
	if !res.run.Held || res.run.Cycles != 2 {
		t.Errorf("run = %+v, want 2 cycles and the output held", res.run)
	}
	if holding, owner := h.agent.Hold(); !holding || owner != "cycle-owner" {
		t.Errorf("agent hold = %v %q, want held for cycle-owner", holding, owner)
	}
}

// TestRunContinuousAgentLost: the agent going away ends the run: the
// command is terminated and the cycle in flight cannot be confirmed.
func TestRunContinuousAgentLost(t *testing.T) {
	h := newContinuousHarness(t, "ok,hang")
	type result struct {
		code int
		err  error
	}
	done := make(chan result, 1)
	go func() {
		_, code, err := h.run(t)
		done <- result{code, err}
	}()
	h.stdout.wait(t, "cycle 2 running")
	h.agent.Close()
	var res result
	select {
	case res = <-done:
	case <-time.After(60 * time.Second):
		t.Fatal("the run did not end within 60 s of the agent going away")
	}
	if !errors.Is(res.err, ErrUnsafe) || res.code != 1 || !strings.Contains(res.err.Error(), "agent connection was lost") {
		t.Fatalf("RunContinuous = %d, %v; want 1 and ErrUnsafe naming the lost agent", res.code, res.err)
	}
	// The run's end is one stderr line, the lost connection first.
	if text := res.err.Error(); strings.Contains(text, "\n") || !strings.HasPrefix(text, "build did not complete safely: the agent connection was lost") {
		t.Errorf("error %q, want one line that begins with the lost agent", text)
	}
	if n := len(h.reports); n != 2 || h.reports[1].Released || !errors.Is(h.reports[1].Err, ErrUnsafe) {
		t.Errorf("reports %s (%v), want cycle 2 ended unconfirmed", h.outcomes(), h.reports)
	}
}

// TestRunContinuousRefusesOtherCommands: only a continuous Gradle command
// runs; anything else is a usage error before the owner line, and nothing
// connects.
func TestRunContinuousRefusesOtherCommands(t *testing.T) {
	for _, argv := range [][]string{
		{"mvn", "compile"},
		{"./gradlew", "classes"},
		{"./gradlew", "-t", "--configuration-cache", "classes"},
	} {
		h := newContinuousHarness(t, "ok")
		h.argv = argv
		_, _, err := h.run(t)
		if !errors.Is(err, ErrInvalidOption) {
			t.Errorf("%q: error %v, want ErrInvalidOption", argv, err)
		}
		if h.stderr.Len() != 0 || len(h.agent.ConnCommands()) != 0 {
			t.Errorf("%q: printed %q and connected %d times; want neither", argv, &h.stderr, len(h.agent.ConnCommands()))
		}
	}
}

// TestRunContinuousCyclesTakeTurns: each cycle takes its turn in the
// project's build queue (Config.Admit) before its BUILD started and gives it
// back only after its end was told to the agent (docs/decisions.md#D20), so
// no other guarded build of the project runs beside a cycle.
func TestRunContinuousCyclesTakeTurns(t *testing.T) {
	h := newContinuousHarness(t, "ok,failed,ok")
	var mu sync.Mutex
	var turns []string
	h.cfg.Admit = func(ctx context.Context) ([]string, func(), error) {
		mu.Lock()
		defer mu.Unlock()
		turns = append(turns, fmt.Sprintf("turn@%d", len(h.agentBuilds())))
		return nil, func() {
			mu.Lock()
			defer mu.Unlock()
			turns = append(turns, fmt.Sprintf("back@%d", len(h.agentBuilds())))
		}, nil
	}
	run, code, err := h.run(t)
	if err != nil || code != 0 {
		t.Fatalf("RunContinuous = %d, %v; want 0, nil\nstderr:\n%s", code, err, &h.stderr)
	}
	if got, want := h.builds(), "started,ok,started,failed,started,ok"; got != want {
		t.Errorf("agent got BUILD %s, want %s", got, want)
	}
	mu.Lock()
	defer mu.Unlock()
	if got, want := strings.Join(turns, ","), "turn@0,back@2,turn@2,back@4,turn@4,back@6"; got != want {
		t.Errorf("turns taken and given back at these counts of BUILD commands: %s, want %s", got, want)
	}
	if run.Cycles != 3 {
		t.Errorf("run = %+v, want 3 cycles", run)
	}
}

// agentBuilds is the agent's BUILD commands so far.
func (h *continuousHarness) agentBuilds() []string {
	var s []string
	for _, l := range h.agent.Commands() {
		if strings.HasPrefix(l, "BUILD ") {
			s = append(s, l)
		}
	}
	return s
}
