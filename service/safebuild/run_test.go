//go:build unix

package safebuild

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/buildguard/buildguard/agentproto"
	"github.com/buildguard/buildguard/buildguard"
	"github.com/buildguard/buildguard/harness/fakeagent"
	"github.com/buildguard/buildguard/internal/testsupport/wait"
)

func sum(s string) string {
	h := sha256.Sum256([]byte(s))
	return hex.EncodeToString(h[:])
}

func TestRunOKReleasesAndProvesChangedClasses(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	// An unchanged class file from an earlier build is not a changed class.
	os.MkdirAll(filepath.Join(f.classes, "app"), 0o755)
	os.WriteFile(filepath.Join(f.classes, "app", "Old.class"), []byte("old"), 0o644)

	res := f.builder.Run(context.Background(), f.request(t, "compile", f.classes, "app.A=v2a", "app.B$Inner=v2b"))
	if res.Outcome != OutcomeOK || res.IsError() {
		t.Fatalf("outcome %s: %s\n%s", res.Outcome, res.Detail, res.Output.Tail)
	}
	if res.ExitCode == nil || *res.ExitCode != 0 {
		t.Errorf("exitCode %v, want 0", res.ExitCode)
	}
	cc := res.ChangedClasses
	if cc.Count != 2 || !cc.AllApplied || !cc.Complete || len(cc.Classes) != 2 {
		t.Fatalf("changedClasses %+v", cc)
	}
	for i, want := range []struct{ class, text string }{{"app.A", "v2a"}, {"app.B$Inner", "v2b"}} {
		got := cc.Classes[i]
		if got.ClassName != want.class || got.SHA256 != sum(want.text) || got.Status != agentproto.ReceiptApplied {
			t.Errorf("class %d = %+v, want %s applied with sha256 of %q", i, got, want.class, want.text)
		}
	}
	if h, _ := f.agent.Hold(); h {
		t.Error("the agent still holds after an ok build")
	}
	owner := res.Owner
	if owner == nil || !agentproto.ValidToken(*owner) {
		t.Fatalf("owner %v", owner)
	}
	cmds := strings.Join(f.agent.Commands(), "\n")
	for _, want := range []string{"BUILD started request=", "BUILD ok request=", "VERIFY "} {
		if !strings.Contains(cmds, want) {
			t.Errorf("the agent never got %q:\n%s", want, cmds)
		}
	}
	if !strings.Contains(cmds, "owner="+*owner) {
		t.Errorf("the hold was not taken with the result's owner:\n%s", cmds)
	}
	if res.Output.Lines != 2 || res.Output.Tail != "compiled app.A\ncompiled app.B$Inner\n" || res.Output.Truncated {
		t.Errorf("output %+v", res.Output)
	}
	if res.Output.LogFile == nil || filepath.Dir(*res.Output.LogFile) != LogDir(f.dir) {
		t.Fatalf("logFile %v, want one in %s", res.Output.LogFile, LogDir(f.dir))
	}
	if b, err := os.ReadFile(*res.Output.LogFile); err != nil || string(b) != res.Output.Tail {
		t.Errorf("log %q (%v), want the whole output", b, err)
	}
}

func TestRunFailedSendsFailedAndKeepsHold(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	res := f.builder.Run(context.Background(), f.request(t, "fail", "3"))
	if res.Outcome != OutcomeFailed || !res.IsError() || res.ExitCode == nil || *res.ExitCode != 3 {
		t.Fatalf("outcome %s exit %v: %s", res.Outcome, res.ExitCode, res.Detail)
	}
	if !strings.Contains(res.Output.Tail, "missingSymbol") {
		t.Errorf("tail %q lacks the compiler error", res.Output.Tail)
	}
	if h, owner := f.agent.Hold(); !h || owner != *res.Owner {
		t.Errorf("hold %v by %q, want held by the build's owner", h, owner)
	}
	if _, err := f.agent.WaitCommand(wait.Context(t, 10*time.Second), "BUILD failed request="); err != nil {
		t.Fatal(err)
	}
	if cc := res.ChangedClasses; cc.Count != 0 || cc.AllApplied || len(cc.Classes) != 0 {
		t.Errorf("changedClasses of a failed build: %+v", cc)
	}

	// The project's next build has the same owner and releases the hold.
	res2 := f.builder.Run(context.Background(), f.request(t, "compile", f.classes, "B=fixed"))
	if res2.Outcome != OutcomeOK || *res2.Owner != *res.Owner {
		t.Fatalf("recovery: outcome %s owner %v: %s", res2.Outcome, res2.Owner, res2.Detail)
	}
	if err := f.agent.WaitHold(wait.Context(t, 10*time.Second), fakeagent.HoldNone); err != nil {
		t.Fatal(err)
	}
}

func TestRunCancelledTerminatesGroupAndSendsFailed(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	pidFile := filepath.Join(t.TempDir(), "pids")
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan *Result, 1)
	go func() { done <- f.builder.Run(ctx, f.request(t, "hang", pidFile)) }()
	pids := wait.PIDFile(t, 10*time.Second, pidFile)
	cancel()
	res := <-done
	if res.Outcome != OutcomeCancelled || res.ExitCode == nil || *res.ExitCode != 128+15 {
		t.Fatalf("outcome %s exit %v: %s", res.Outcome, res.ExitCode, res.Detail)
	}
	wait.Gone(t, 10*time.Second, pids...)
	if h, _ := f.agent.Hold(); !h {
		t.Error("no hold after a cancelled build")
	}
	if !f.agent.Received("BUILD failed request=") {
		t.Errorf("BUILD failed not sent: %q", f.agent.Commands())
	}
	if !strings.Contains(res.Detail, "BUILD failed was acknowledged") {
		t.Errorf("detail %q", res.Detail)
	}
}

func exitText(code *int) string {
	if code == nil {
		return "null"
	}
	return fmt.Sprint(*code)
}

func TestRunTimeoutKillsAnIgnoringBuild(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	pidFile := filepath.Join(t.TempDir(), "pids")
	req := f.request(t, "hang", pidFile, "ignore")
	req.Timeout = 2 * time.Second // long after the build ignores SIGTERM
	res := f.builder.Run(context.Background(), req)
	if res.Outcome != OutcomeTimeout || res.ExitCode == nil || *res.ExitCode != 128+9 {
		t.Fatalf("outcome %s exit %s: %s", res.Outcome, exitText(res.ExitCode), res.Detail)
	}
	wait.Gone(t, 10*time.Second, wait.PIDFile(t, 10*time.Second, pidFile)...)
	if !f.agent.Received("BUILD failed request=") {
		t.Errorf("BUILD failed not sent: %q", f.agent.Commands())
	}
}

func TestRunFloodKeepsTailBoundedAndLogComplete(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	const size = 10 << 20
	res := f.builder.Run(context.Background(), f.request(t, "flood", "10485760"))
	if res.Outcome != OutcomeOK {
		t.Fatalf("outcome %s: %s", res.Outcome, res.Detail)
	}
	o := res.Output
	if len(o.Tail) > TailBytes || strings.Count(o.Tail, "\n") > TailLines || !o.Truncated {
		t.Errorf("tail: %d bytes, %d lines, truncated %v", len(o.Tail), strings.Count(o.Tail, "\n"), o.Truncated)
	}
	wantLines := (size + 99) / 100
	if o.Lines != wantLines {
		t.Errorf("lines %d, want %d", o.Lines, wantLines)
	}
	log, err := os.ReadFile(*o.LogFile)
	if err != nil {
		t.Fatal(err)
	}
	if len(log) != wantLines*100 || !bytes.HasSuffix(log, []byte(o.Tail)) {
		t.Errorf("log has %d bytes, want %d ending with the tail", len(log), wantLines*100)
	}
	if !strings.HasPrefix(o.Tail, "0000") || strings.Count(o.Tail, "\n") != TailLines {
		t.Errorf("tail does not start at a whole line: %.30q", o.Tail)
	}
}

func TestRunStdinIsDevNull(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	res := f.builder.Run(context.Background(), f.request(t, "stdin"))
	if res.Outcome != OutcomeOK || res.Output.Tail != "stdin 0 bytes err=<nil>\n" {
		t.Fatalf("outcome %s tail %q", res.Outcome, res.Output.Tail)
	}
}

func TestRunProgress(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	var mu sync.Mutex
	type report struct {
		lines int
		msg   string
	}
	var got []report
	req := f.request(t, "lines", "500")
	req.Progress = func(lines int, msg string) {
		mu.Lock()
		got = append(got, report{lines, msg})
		mu.Unlock()
	}
	res := f.builder.Run(context.Background(), req)
	mu.Lock()
	defer mu.Unlock()
	if res.Outcome != OutcomeOK || len(got) == 0 {
		t.Fatalf("outcome %s, %d reports", res.Outcome, len(got))
	}
	for i, r := range got {
		if i > 0 && r.lines <= got[i-1].lines {
			t.Errorf("report %d: lines %d after %d", i, r.lines, got[i-1].lines)
		}
		if utf8.RuneCountInString(r.msg) > MessageChars {
			t.Errorf("report %d: message of %d characters", i, utf8.RuneCountInString(r.msg))
		}
	}
	if got[0].msg == "" {
		t.Error("first report without a message")
	}
	if n := len(got); n > 1 && strings.HasPrefix(got[n-1].msg, "last ") && utf8.RuneCountInString(got[n-1].msg) != MessageChars {
		t.Errorf("the long last line was not cut to %d characters: %d", MessageChars, utf8.RuneCountInString(got[n-1].msg))
	}
}

func TestRunRefusedBeforeTheCommand(t *testing.T) {
	t.Parallel()
	f := newFixture(t, fakeagent.WithHold("someone-else"))
	marker := filepath.Join(t.TempDir(), "out")
	res := f.builder.Run(context.Background(), f.request(t, "compile", marker, "X=1"))
	if res.Outcome != OutcomeRefused || res.ExitCode != nil || res.Output.LogFile != nil {
		t.Fatalf("outcome %s exit %v log %v: %s", res.Outcome, res.ExitCode, res.Output.LogFile, res.Detail)
	}
	if _, err := os.Stat(marker); err == nil {
		t.Error("the command ran although the hold was refused")
	}
	if !strings.Contains(res.Detail, "BUILD started was not acknowledged") {
		t.Errorf("detail %q", res.Detail)
	}
}

// TestRunStragglerFails: a build that exits 0 while a process of its group
// runs on is failed (docs/decisions.md#D12): the straggler is killed after
// the grace period, BUILD failed is sent and the output stays held.
func TestRunStragglerFails(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	pidFile := filepath.Join(t.TempDir(), "straggler")
	res := f.builder.Run(context.Background(), f.request(t, "straggler", pidFile))
	if res.Outcome != OutcomeFailed || res.ExitCode == nil || *res.ExitCode != 0 {
		t.Fatalf("outcome %s exit %v: %s", res.Outcome, res.ExitCode, res.Detail)
	}
	if !strings.Contains(res.Detail, "1 processes of the build were still running") || !strings.Contains(res.Detail, "BUILD failed was acknowledged") {
		t.Errorf("detail %q", res.Detail)
	}
	wait.Gone(t, 10*time.Second, wait.PIDFile(t, 10*time.Second, pidFile)...)
	if h, _ := f.agent.Hold(); !h {
		t.Error("the hold is gone after a build that left a process behind")
	}
	if f.agent.Received("BUILD ok request=") || !f.agent.Received("BUILD failed request=") {
		t.Errorf("the agent got %q, want BUILD failed and no BUILD ok", f.agent.Commands())
	}
}

// TestStopCancelsTheRunningBuild: Stop ends the running build as a
// cancellation would (group gone, BUILD failed), waits for it, and refuses
// later builds.
func TestStopCancelsTheRunningBuild(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	pidFile := filepath.Join(t.TempDir(), "pids")
	done := make(chan *Result, 1)
	go func() { done <- f.builder.Run(context.Background(), f.request(t, "hang", pidFile)) }()
	pids := wait.PIDFile(t, 10*time.Second, pidFile)
	f.builder.Stop()
	// Stop waited for the build: its BUILD failed was already acknowledged.
	if !f.agent.Received("BUILD failed request=") {
		t.Errorf("Stop returned before BUILD failed was sent: %q", f.agent.Commands())
	}
	res := <-done
	if res.Outcome != OutcomeCancelled || !strings.Contains(res.Detail, "because the server is stopping") {
		t.Fatalf("outcome %s: %s", res.Outcome, res.Detail)
	}
	wait.Gone(t, 10*time.Second, pids...)
	marker := filepath.Join(t.TempDir(), "later")
	if later := f.builder.Run(context.Background(), f.request(t, "compile", marker, "X=1")); later.Outcome != OutcomeRefused {
		t.Errorf("a build after Stop: %s", later.Outcome)
	}
	if _, err := os.Stat(marker); err == nil {
		t.Error("a build after Stop ran")
	}
}

// TestRunCancelWhileStartedAwaitsAckSendsFailed: a cancellation while BUILD
// started awaits its acknowledgement (the agent took the hold, its ack is
// slow) ends with BUILD failed acknowledged, and the result says so
// (docs/decisions.md#D21).
func TestRunCancelWhileStartedAwaitsAckSendsFailed(t *testing.T) {
	t.Parallel()
	f := newFixture(t, fakeagent.WithFaults(fakeagent.Faults{Reply: fakeagent.ForBuild(fakeagent.DelayReply(3*time.Second), "started")}))
	marker := filepath.Join(t.TempDir(), "out")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() {
		if _, err := f.agent.WaitCommand(wait.Context(t, 10*time.Second), "BUILD started request="); err == nil {
			cancel()
		}
	}()
	res := f.builder.Run(ctx, f.request(t, "compile", marker, "X=1"))
	if res.Outcome != OutcomeCancelled || res.ExitCode != nil {
		t.Fatalf("outcome %s exit %s: %s", res.Outcome, exitText(res.ExitCode), res.Detail)
	}
	if _, err := os.Stat(marker); err == nil {
		t.Error("the command ran")
	}
	if !f.agent.Received("BUILD failed request=") {
		t.Fatalf("BUILD failed was never sent: %q", f.agent.Commands())
	}
	if h, owner := f.agent.Hold(); !h || owner != *res.Owner {
		t.Errorf("hold %v by %q, want the hold kept for the project's owner", h, owner)
	}
	if !strings.Contains(res.Detail, "nothing ran") || !strings.Contains(res.Detail, "BUILD failed was acknowledged") {
		t.Errorf("detail %q", res.Detail)
	}
}

// TestRunCancelWhileOKAwaitsAckSaysReleased: a cancellation that arrives
// while BUILD ok is acknowledged did not end the build; the result says
// what the agent was told and acknowledged (ok, released), never "BUILD
// failed was acknowledged" (docs/decisions.md#D21).
func TestRunCancelWhileOKAwaitsAckSaysReleased(t *testing.T) {
	t.Parallel()
	f := newFixture(t, fakeagent.WithFaults(fakeagent.Faults{Reply: fakeagent.ForBuild(fakeagent.DelayReply(time.Second), "ok")}))
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() {
		if _, err := f.agent.WaitCommand(wait.Context(t, 10*time.Second), "BUILD ok request="); err == nil {
			cancel()
		}
	}()
	res := f.builder.Run(ctx, f.request(t, "compile", f.classes, "app.A=v1"))
	if f.agent.Received("BUILD failed request=") {
		t.Fatalf("BUILD failed was sent after ok: %q", f.agent.Commands())
	}
	if res.Outcome != OutcomeOK {
		t.Errorf("outcome %s, want ok: BUILD ok was acknowledged", res.Outcome)
	}
	if strings.Contains(res.Detail, "BUILD failed") || !strings.Contains(res.Detail, "BUILD ok was acknowledged") {
		t.Errorf("detail %q does not say what the agent was told", res.Detail)
	}
	if err := f.agent.WaitHold(wait.Context(t, 10*time.Second), fakeagent.HoldNone); err != nil {
		t.Fatal(err)
	}
}

// TestRunRefusalIsWordedByTheFront: the core's refusal reaches the result
// with the advice of the front that asked (docs/safe-build.md#4), never in
// another front's words: without advice it names no flag and no tool
// argument either.
func TestRunRefusalIsWordedByTheFront(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	advice := buildguard.Advice{buildguard.FixDiscovery: "ADVICE-DISCOVERY", buildguard.FixOwner: "ADVICE-OWNER"}
	req := f.request(t, "compile", filepath.Join(t.TempDir(), "out"), "X=1")
	req.Endpoint = agentproto.Endpoint{Base: t.TempDir()} // no port file to discover
	for _, a := range []buildguard.Advice{nil, advice} {
		req.Advice = a
		res := f.builder.Run(context.Background(), req)
		want := "build refused: no port file found"
		if a != nil {
			want += "; ADVICE-DISCOVERY"
		}
		if res.Outcome != OutcomeRefused || res.Detail != want {
			t.Errorf("advice %v: outcome %s, detail %q; want %q", a, res.Outcome, res.Detail, want)
		}
	}
	held := newFixture(t, fakeagent.WithHold("someone-else"))
	req = held.request(t, "compile", filepath.Join(t.TempDir(), "out"), "X=1")
	req.Advice = advice
	res := held.builder.Run(context.Background(), req)
	if res.Outcome != OutcomeRefused || !strings.Contains(res.Detail, "; ADVICE-OWNER") || strings.Contains(res.Detail, "--") {
		t.Errorf("outcome %s, detail %q; want the owner advice and no flag", res.Outcome, res.Detail)
	}
}

// TestRunLogCapCutsTheLogAndSaysSo: a build that prints more than its
// maxLogMiB leaves a log of that size on disk; its lines are all counted,
// the tail is the real end, and the result says the log was cut.
func TestRunLogCapCutsTheLogAndSaysSo(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	req := f.request(t, "flood", "3145728")
	req.Build.MaxLogBytes = 1 << 20
	res := f.builder.Run(context.Background(), req)
	if res.Outcome != OutcomeOK {
		t.Fatalf("outcome %s: %s", res.Outcome, res.Detail)
	}
	fi, err := os.Stat(*res.Output.LogFile)
	if err != nil {
		t.Fatal(err)
	}
	if fi.Size() < 1<<20 || fi.Size() > 1<<20+512 {
		t.Errorf("log of %d bytes, want 1 MiB and the note", fi.Size())
	}
	if res.Output.Lines != (3145728+99)/100 {
		t.Errorf("lines %d, want every line counted", res.Output.Lines)
	}
	if !strings.Contains(res.Detail, "the log was cut at 1 MiB") || !strings.Contains(res.Detail, "of the 3145800 bytes the build printed") {
		t.Errorf("detail %q does not say the log was cut", res.Detail)
	}
}

// TestRunTimeoutWhileStartedAwaitsAckSendsFailed: the build's own time
// limit running out while BUILD started awaits its acknowledgement ends as
// a cancellation does: nothing ran, BUILD failed acknowledged, the hold
// kept for the project's owner (docs/decisions.md#D21).
func TestRunTimeoutWhileStartedAwaitsAckSendsFailed(t *testing.T) {
	t.Parallel()
	f := newFixture(t, fakeagent.WithFaults(fakeagent.Faults{Reply: fakeagent.ForBuild(fakeagent.DelayReply(3*time.Second), "started")}))
	marker := filepath.Join(t.TempDir(), "out")
	req := f.request(t, "compile", marker, "X=1")
	req.Timeout = 300 * time.Millisecond
	res := f.builder.Run(context.Background(), req)
	if res.Outcome != OutcomeTimeout || res.ExitCode != nil {
		t.Fatalf("outcome %s exit %s: %s", res.Outcome, exitText(res.ExitCode), res.Detail)
	}
	if _, err := os.Stat(marker); err == nil {
		t.Error("the command ran")
	}
	if !f.agent.Received("BUILD failed request=") {
		t.Fatalf("BUILD failed was never sent: %q", f.agent.Commands())
	}
	if h, owner := f.agent.Hold(); !h || owner != *res.Owner {
		t.Errorf("hold %v by %q, want the hold kept for the project's owner", h, owner)
	}
	if !strings.Contains(res.Detail, "before its command started; nothing ran") || !strings.Contains(res.Detail, "BUILD failed was acknowledged") {
		t.Errorf("detail %q", res.Detail)
	}
}

// TestRunLostOKAckSaysWhatTheAgentAnswered: when BUILD ok is not
// acknowledged, the BUILD failed that follows is answered, and the result
// says how: here the agent had taken the ok and released the output, so
// it rejects the failed of an owner it no longer holds for
// (docs/decisions.md#D21).
func TestRunLostOKAckSaysWhatTheAgentAnswered(t *testing.T) {
	t.Parallel()
	f := newFixture(t, fakeagent.WithFaults(fakeagent.Faults{Reply: fakeagent.ForBuild(fakeagent.DropReply, "ok")}))
	f.builder = New(Config{AgentTimeout: 500 * time.Millisecond, Grace: 500 * time.Millisecond, Env: f.builder.cfg.Env})
	if err := f.agent.WaitHold(wait.Context(t, 10*time.Second), fakeagent.HoldNone); err != nil {
		t.Fatal(err)
	}
	res := f.builder.Run(context.Background(), f.request(t, "compile", f.classes, "app.A=v1"))
	if res.Outcome != OutcomeFailed {
		t.Fatalf("outcome %s: %s", res.Outcome, res.Detail)
	}
	if err := f.agent.WaitHold(wait.Context(t, 10*time.Second), fakeagent.HoldNone); err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(res.Detail, "the build exited with code 0, but BUILD ok was not acknowledged") || !strings.Contains(res.Detail, "BUILD failed was rejected: the agent holds nothing for this project's owner") {
		t.Errorf("detail %q does not say how the agent answered the BUILD failed", res.Detail)
	}
}

// TestRunCancelAfterExitBeforeOKSaysWhatHappened: a cancellation that
// arrives after the command exited 0, while the changed classes are
// searched and before BUILD ok is sent, ends the build with BUILD failed;
// the detail says the command exited 0 and never that its process group
// was terminated, which did not happen (docs/decisions.md#D21).
func TestRunCancelAfterExitBeforeOKSaysWhatHappened(t *testing.T) {
	t.Parallel()
	f := newFixture(t, fakeagent.WithFaults(fakeagent.Faults{Reply: fakeagent.ForKind(fakeagent.DelayReply(time.Second), fakeagent.KindDoctor)}))
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() {
		// The second DOCTOR is the search after the command exited 0.
		if _, err := f.agent.WaitCommands(wait.Context(t, 20*time.Second), "DOCTOR ", 2); err == nil {
			cancel()
		}
	}()
	res := f.builder.Run(ctx, f.request(t, "compile", f.classes, "app.A=v1"))
	if res.Outcome != OutcomeCancelled || res.ExitCode == nil || *res.ExitCode != 0 {
		t.Fatalf("outcome %s, exit code %v; want cancelled after exit 0 (agent got %q)", res.Outcome, res.ExitCode, f.agent.Commands())
	}
	if f.agent.Received("BUILD ok request=") || !f.agent.Received("BUILD failed request=") {
		t.Fatalf("the agent got %q, want BUILD failed and no BUILD ok", f.agent.Commands())
	}
	if strings.Contains(res.Detail, "terminated") || !strings.Contains(res.Detail, "exited 0") || !strings.Contains(res.Detail, "BUILD failed was acknowledged") {
		t.Errorf("detail %q: want the command's exit 0 and the acknowledged BUILD failed, no termination", res.Detail)
	}
}
