//go:build unix

package acceptance

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/buildguard/buildguard/agentproto"
)

const (
	// fixtureOwner holds the hold across the scenarios; otherOwner competes.
	fixtureOwner = "fixture-owner"
	otherOwner   = "other-owner"
	// heldPause is how long scenario 2 watches app.log after the failure.
	heldPause = 1500 * time.Millisecond
	// receiptTimeout bounds scenario 5's VERIFY polling per class.
	receiptTimeout = 15 * time.Second
)

// ScenarioError is a failed check: which lane, which scenario, what was
// checked and which log to read.
type ScenarioError struct {
	Lane     Lane
	Number   int    // 1..11
	Scenario string // its name in LaneScenarios
	Check    string // the pass criterion that did not hold, with what was seen
	Log      string // the log to read
	Err      error  // the underlying error, if any
}

func (e *ScenarioError) Error() string {
	msg := fmt.Sprintf("FAIL %s: scenario %d %s: %s", e.Lane, e.Number, e.Scenario, e.Check)
	if e.Err != nil {
		msg += ": " + e.Err.Error()
	}
	if e.Log != "" {
		msg += "; see " + e.Log
	}
	return msg
}

// Unwrap makes a ScenarioError match ErrScenario and its cause.
func (e *ScenarioError) Unwrap() []error {
	if e.Err == nil {
		return []error{ErrScenario}
	}
	return []error{ErrScenario, e.Err}
}

// laneRun carries one lane's state from scenario to scenario: the same
// project and the same live JVM, so the order matters.
type laneRun struct {
	cfg   Config
	tools tools
	p     project
	app   *liveApp
	agent agentClient

	number   int    // the scenario being run
	log      string // its log
	session  string // the reference session from scenario 1
	baseline string // sha(A.class) after the ordinary build
	failed   string // sha(A.class) after the partial failure
	receipts [2]receiptView
	oneCall  []OneCallResult
	queue    *QueueEvidence
	results  []ScenarioResult

	continuousEv *ContinuousEvidence
}

// fail builds the ScenarioError of the current scenario.
func (r *laneRun) fail(err error, format string, args ...any) error {
	return &ScenarioError{
		Lane: r.p.lane, Number: r.number, Scenario: LaneScenarios(r.p.lane)[r.number-1],
		Check: fmt.Sprintf(format, args...), Log: r.log, Err: err,
	}
}

// runLane generates the lane's project and runs its scenarios
// (LaneScenarios). The application is stopped on every path.
func runLane(ctx context.Context, c Config, t tools, lane Lane) (ev *LaneEvidence, err error) {
	r := &laneRun{cfg: c, tools: t, p: project{lane: lane, root: filepath.Join(c.WorkDir, projectDirName(lane))}}
	if err := writeProject(r.p); err != nil {
		return nil, err
	}
	defer func() {
		if r.app != nil {
			if stopErr := r.app.Stop(); stopErr != nil {
				err = errors.Join(err, stopErr)
			}
		}
	}()
	scenarios := []func(context.Context) error{
		r.optOut, r.partialFailure, r.competingOwner, r.sameOwnerRecovery,
		r.exactByteReceipts, r.upToDateBarrier, r.offlineBeforeOutput,
		r.oneCallGoodChange, r.oneCallFailingChange, r.queuedBuilds,
	}
	if lane == LaneGradle {
		scenarios = append(scenarios, r.continuous)
	}
	names := LaneScenarios(lane)
	begin := time.Now()
	for i, s := range scenarios {
		r.number, r.log = i+1, ""
		start := time.Now()
		if err := s(ctx); err != nil {
			return nil, err
		}
		res := ScenarioResult{Name: names[i], WallMs: time.Since(start).Milliseconds()}
		r.results = append(r.results, res)
		fmt.Fprintf(c.Out, "%s: %d/%d %s passed (%d ms)\n", lane, i+1, len(scenarios), res.Name, res.WallMs)
	}
	return &LaneEvidence{
		Tool:       string(lane),
		Passed:     true,
		PID:        r.app.PID(),
		SessionID:  r.session,
		Scenarios:  r.results,
		Receipts:   []json.RawMessage{r.receipts[0].raw, r.receipts[1].raw},
		OneCall:    r.oneCall,
		Queue:      r.queue,
		Continuous: r.continuousEv,
		WallMs:     time.Since(begin).Milliseconds(),
		ProjectDir: r.p.root,
	}, nil
}

// build runs s with its output to the named log; a step that cannot run or
// finish is a scenario failure.
func (r *laneRun) build(ctx context.Context, s step, logName string) (int, error) {
	r.log = r.p.log(logName)
	s.log = r.log
	res, err := run(ctx, s)
	if err != nil {
		return res.exitCode, r.fail(err, "the build did not finish")
	}
	return res.exitCode, nil
}

// sha hashes a class file.
func (r *laneRun) sha(path string) (string, error) {
	h, err := agentproto.FileSHA256(path)
	if err != nil {
		return "", r.fail(err, "reading %s", filepath.Base(path))
	}
	return h, nil
}

// expectHold asks DOCTOR and requires buildHold == want.
func (r *laneRun) expectHold(ctx context.Context, want string) (doctorView, error) {
	d, err := r.agent.doctor(ctx)
	if err != nil {
		return d, r.fail(err, "DOCTOR must report buildHold %q", want)
	}
	if d.buildHold != want {
		return d, r.fail(nil, "DOCTOR reports buildHold %q, want %q", d.buildHold, want)
	}
	return d, nil
}

// logContains reports whether the current log contains text.
func (r *laneRun) logContains(text string) (bool, error) {
	b, err := os.ReadFile(r.log)
	if err != nil {
		return false, r.fail(err, "reading the log")
	}
	return strings.Contains(string(b), text), nil
}

// 1. opt-out: the ordinary build succeeds with no agent running; the live
// app's first DOCTOR reports no hold; its session is the reference.
func (r *laneRun) optOut(ctx context.Context) error {
	code, err := r.build(ctx, ordinaryBuild(r.p, r.tools), "01-baseline.log")
	if err != nil {
		return err
	}
	if code != 0 {
		return r.fail(nil, "the ordinary build must exit 0, exited %d", code)
	}
	if r.baseline, err = r.sha(r.p.classA()); err != nil {
		return err
	}
	if code, err = r.build(ctx, appCompile(r.p, r.tools), "02-app-compile.log"); err != nil {
		return err
	}
	if code != 0 {
		return r.fail(nil, "javac App.java must exit 0, exited %d", code)
	}
	r.log = r.p.log("app.log")
	if r.app, err = startApp(r.cfg.Java, r.cfg.AgentJar, r.p); err != nil {
		return r.fail(err, "starting the application")
	}
	for _, text := range []string{"VALUES=1:1", "] Watching "} {
		if err := r.app.waitFor(ctx, text); err != nil {
			return r.fail(err, "the application must print %q", text)
		}
	}
	port, err := agentproto.Endpoint{PortFile: filepath.Join(r.p.root, "agent.port")}.Resolve()
	if err != nil {
		return r.fail(err, "reading the agent's port file")
	}
	r.agent = agentClient{port: port}
	d, err := r.expectHold(ctx, "none")
	if err != nil {
		return err
	}
	if d.sessionID == "" {
		return r.fail(nil, "the first DOCTOR must carry a sessionId")
	}
	r.session = d.sessionID
	return nil
}

// 2. partial-failure: a compiles, b fails for real; a's new bytes never go
// live; the hold is named; VERIFY of the new A is not applied.
func (r *laneRun) partialFailure(ctx context.Context) error {
	if err := setSources(r.p, sourceVersion{a: 2, broken: true}); err != nil {
		return r.fail(err, "writing v2 sources")
	}
	code, err := r.build(ctx, safeBuild(r.p, r.tools, r.agent.port, fixtureOwner), "03-partial-failure.log")
	if err != nil {
		return err
	}
	if code == 0 {
		return r.fail(nil, "the safe build with a broken module b must exit non-zero, exited 0")
	}
	if r.failed, err = r.sha(r.p.classA()); err != nil {
		return err
	}
	if r.failed == r.baseline {
		return r.fail(nil, "A.class must differ from the baseline (module a compiled before b failed); it is unchanged")
	}
	if ok, err := r.logContains("missingSymbol"); err != nil {
		return err
	} else if !ok {
		return r.fail(nil, "the log must contain missingSymbol (a real compiler error)")
	}
	select {
	case <-ctx.Done():
		return r.fail(ctx.Err(), "waiting %s after the failure", heldPause)
	case <-time.After(heldPause):
	}
	if live, err := r.app.hasLinePrefix("VALUES=2:"); err != nil {
		return r.fail(err, "reading app.log")
	} else if live {
		r.log = r.app.log
		return r.fail(nil, "app.log has a line starting VALUES=2: (the partial output went live)")
	}
	if _, err := r.expectHold(ctx, "named"); err != nil {
		return err
	}
	rc, err := r.agent.verify(ctx, "A", r.failed)
	if err != nil {
		return r.fail(err, "VERIFY A %s", r.failed)
	}
	if rc.status == "applied" {
		return r.fail(nil, "VERIFY A of the partially built bytes must not be applied, it is")
	}
	return nil
}

// 3. competing-owner: another owner is refused before its child compiles.
func (r *laneRun) competingOwner(ctx context.Context) error {
	if err := setSources(r.p, sourceVersion{a: 3, b: 3}); err != nil {
		return r.fail(err, "writing v3 sources")
	}
	code, err := r.build(ctx, safeBuild(r.p, r.tools, r.agent.port, otherOwner), "04-other-owner.log")
	if err != nil {
		return err
	}
	if code == 0 {
		return r.fail(nil, "the safe build of %s must exit non-zero, exited 0", otherOwner)
	}
	now, err := r.sha(r.p.classA())
	if err != nil {
		return err
	}
	if now != r.failed {
		return r.fail(nil, "A.class must be unchanged since the partial failure (refused before the child); it changed")
	}
	_, err = r.expectHold(ctx, "named")
	return err
}

// 4. same-owner-recovery: the holder builds again, the app shows 3:3, the
// hold is gone.
func (r *laneRun) sameOwnerRecovery(ctx context.Context) error {
	code, err := r.build(ctx, safeBuild(r.p, r.tools, r.agent.port, fixtureOwner), "05-recovery.log")
	if err != nil {
		return err
	}
	if code != 0 {
		return r.fail(nil, "the recovery build must exit 0, exited %d", code)
	}
	if err := r.app.waitFor(ctx, "VALUES=3:3"); err != nil {
		r.log = r.app.log
		return r.fail(err, "the application must print VALUES=3:3")
	}
	_, err = r.expectHold(ctx, "none")
	return err
}

// 5. exact-byte-receipts: VERIFY of the current A and B bytes becomes
// applied, in the reference session, and the app never restarted.
func (r *laneRun) exactByteReceipts(ctx context.Context) error {
	for i, c := range []struct{ name, path string }{{"A", r.p.classA()}, {"B", r.p.classB()}} {
		want, err := r.sha(c.path)
		if err != nil {
			return err
		}
		rc, err := r.pollApplied(ctx, c.name, want)
		if err != nil {
			return err
		}
		if rc.observed != want {
			return r.fail(nil, "receipt for %s: observedSha256 %s, want %s", c.name, rc.observed, want)
		}
		if rc.sessionID != r.session {
			return r.fail(nil, "receipt for %s: sessionId %s, want the reference %s", c.name, rc.sessionID, r.session)
		}
		r.receipts[i] = rc
	}
	if !r.app.Running() {
		r.log = r.app.log
		return r.fail(ErrAppExited, "the application must still run")
	}
	return nil
}

// pollApplied polls VERIFY every pollInterval for up to receiptTimeout
// until the receipt is applied.
func (r *laneRun) pollApplied(ctx context.Context, class, sha string) (receiptView, error) {
	deadline := time.Now().Add(receiptTimeout)
	var last receiptView
	var lastErr error
	for {
		rc, err := r.agent.verify(ctx, class, sha)
		if err == nil && rc.status == "applied" {
			return rc, nil
		}
		last, lastErr = rc, err
		if time.Now().After(deadline) || ctx.Err() != nil {
			break
		}
		select {
		case <-ctx.Done():
		case <-time.After(pollInterval):
		}
	}
	if lastErr != nil {
		return last, r.fail(lastErr, "VERIFY %s %s must become applied within %s", class, sha, receiptTimeout)
	}
	return last, r.fail(nil, "VERIFY %s %s must become applied within %s; last status %q", class, sha, receiptTimeout, last.status)
}

// 6. up-to-date-barrier: with nothing to compile the wrapper still runs.
func (r *laneRun) upToDateBarrier(ctx context.Context) error {
	code, err := r.build(ctx, safeBuild(r.p, r.tools, r.agent.port, fixtureOwner), "06-up-to-date.log")
	if err != nil {
		return err
	}
	if code != 0 {
		return r.fail(nil, "the up-to-date safe build must exit 0, exited %d", code)
	}
	line := "buildguard: build owner: " + fixtureOwner
	if ok, err := r.logContains(line); err != nil {
		return err
	} else if !ok {
		return r.fail(nil, "the log must contain %q (the wrapper ran)", line)
	}
	return nil
}

// 7. offline-before-output: against a port that refuses connections the
// wrapper refuses before its child compiles anything.
func (r *laneRun) offlineBeforeOutput(ctx context.Context) error {
	if err := setSources(r.p, sourceVersion{a: 4, b: 4}); err != nil {
		return r.fail(err, "writing v4 sources")
	}
	dead, err := reserveDeadPort()
	if err != nil {
		return r.fail(err, "reserving a bound, not listening port")
	}
	defer dead.Close()
	code, err := r.build(ctx, safeBuild(r.p, r.tools, dead.Port(), fixtureOwner), "07-offline.log")
	if err != nil {
		return err
	}
	if code == 0 {
		return r.fail(nil, "the safe build against a refusing port %d must exit non-zero, exited 0", dead.Port())
	}
	now, err := r.sha(r.p.classA())
	if err != nil {
		return err
	}
	if now != r.receipts[0].observed {
		return r.fail(nil, "A.class must still be the bytes of the A receipt (nothing compiled); it changed")
	}
	return nil
}
