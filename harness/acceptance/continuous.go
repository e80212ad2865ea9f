//go:build unix

package acceptance

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/buildguard/buildguard/internal/proc"
)

const (
	// continuousOwner is the owner of the continuous run's cycles.
	continuousOwner = "continuous-owner"
	// continuousLog is the run's combined stdout and stderr.
	continuousLog = "11-continuous.log"
	// cycleTimeout bounds the wait for one cycle's line and for Gradle to
	// watch again after it.
	cycleTimeout = 3 * time.Minute
	// heldLines is how many VALUES lines the JVM must print after the
	// failed cycle (25 ms apart: about a second) while none of them may
	// show its bytes.
	heldLines = 40
	// stopGrace bounds how long the run may take to end after SIGINT or
	// SIGTERM (buildguard's own grace for its child's group included).
	stopGrace = time.Minute
)

// cycleLineRE matches buildguard's per-cycle stderr line.
var cycleLineRE = regexp.MustCompile(`^buildguard: cycle (\d+) (ok|failed|refused|stopped) .*$`)

// parseCycles reads the cycle lines of a continuous run's log.
func parseCycles(log []byte) []ContinuousCycle {
	var cycles []ContinuousCycle
	for _, l := range strings.Split(string(log), "\n") {
		m := cycleLineRE.FindStringSubmatch(l)
		if m == nil {
			continue
		}
		n, _ := strconv.Atoi(m[1])
		cycles = append(cycles, ContinuousCycle{Number: n, Outcome: m[2], Released: strings.HasSuffix(l, "; output released"), Line: l})
	}
	return cycles
}

// continuousRun is `buildguard --continuous` around the lane's Gradle, in
// its own process group, stdin an idle open pipe (Gradle's continuous mode
// ends at the end of its stdin).
type continuousRun struct {
	cmd    *exec.Cmd
	stdin  io.WriteCloser
	log    string
	exited chan struct{}
	group  int // the Gradle client's process group, once known
}

// continuousBuild is the lane's continuous Gradle build under buildguard.
func continuousBuild(t tools, owner string) []string {
	return []string{t.buildguard, "--port-file", "agent.port", "--owner", owner, "--continuous", "--",
		t.gradle, "--offline", "--no-daemon", "--console=plain", "--continuous", "classes"}
}

// startContinuous starts the run with its output appended to logPath.
func startContinuous(argv []string, dir, logPath string) (*continuousRun, error) {
	f, err := os.OpenFile(logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	fmt.Fprintf(f, "# harness: running in %s: %s\n", dir, quoteArgv(argv))
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Dir = dir
	cmd.Stdout, cmd.Stderr = f, f
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		stdin.Close()
		return nil, err
	}
	r := &continuousRun{cmd: cmd, stdin: stdin, log: logPath, exited: make(chan struct{})}
	go func() {
		cmd.Wait()
		close(r.exited)
	}()
	return r, nil
}

// kill ends the run on a failed check: SIGTERM (buildguard ends its
// child's group), then after stopGrace SIGKILL to buildguard's group and to
// the Gradle client's. It is idempotent.
func (c *continuousRun) kill() {
	select {
	case <-c.exited:
	default:
		_ = c.cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-c.exited:
		case <-time.After(stopGrace):
		}
	}
	_ = syscall.Kill(-c.cmd.Process.Pid, syscall.SIGKILL)
	if c.group > 0 {
		_ = syscall.Kill(-c.group, syscall.SIGKILL)
	}
	<-c.exited
	c.stdin.Close()
}

// waitCount re-reads the log every pollInterval until text occurs n times;
// it fails after timeout, when ctx ends or when the run exits without it.
func (c *continuousRun) waitCount(ctx context.Context, text string, n int, timeout time.Duration) error {
	deadline := time.NewTimer(timeout)
	defer deadline.Stop()
	tick := time.NewTicker(pollInterval)
	defer tick.Stop()
	exited := false
	for {
		b, err := os.ReadFile(c.log)
		if err != nil {
			return err
		}
		if bytes.Count(b, []byte(text)) >= n {
			return nil
		}
		if exited {
			return fmt.Errorf("the run exited before %d× %q", n, text)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-deadline.C:
			return fmt.Errorf("no %d× %q after %s", n, text, timeout)
		case <-c.exited:
			exited = true
		case <-tick.C:
		}
	}
}

// cycle waits for the line of cycle n and for Gradle to watch again (its
// n-th "Waiting for changes"), then returns the cycle.
func (c *continuousRun) cycle(ctx context.Context, n int) (ContinuousCycle, error) {
	prefix := "buildguard: cycle " + strconv.Itoa(n) + " "
	if err := c.waitCount(ctx, prefix, 1, cycleTimeout); err != nil {
		return ContinuousCycle{}, err
	}
	if err := c.waitCount(ctx, "Waiting for changes to input files", n, cycleTimeout); err != nil {
		return ContinuousCycle{}, err
	}
	b, err := os.ReadFile(c.log)
	if err != nil {
		return ContinuousCycle{}, err
	}
	for _, cy := range parseCycles(b) {
		if cy.Number == n {
			return cy, nil
		}
	}
	return ContinuousCycle{}, fmt.Errorf("no line of cycle %d", n)
}

// childGroup is the process group of buildguard's child (the Gradle
// client), its own group (docs/decisions.md#D12).
func (c *continuousRun) childGroup() (int, error) {
	tasks, err := filepath.Glob("/proc/" + strconv.Itoa(c.cmd.Process.Pid) + "/task/*/children")
	if err != nil {
		return 0, err
	}
	var kids []string
	for _, path := range tasks {
		if b, err := os.ReadFile(path); err == nil {
			kids = append(kids, strings.Fields(string(b))...)
		}
	}
	if len(kids) != 1 {
		return 0, fmt.Errorf("buildguard has children %v, want one (the Gradle client)", kids)
	}
	pid, err := strconv.Atoi(kids[0])
	if err != nil {
		return 0, err
	}
	return syscall.Getpgid(pid)
}

// appLines counts the VALUES lines app.log has so far and whether one of
// them starts with prefix.
func appLines(path, prefix string) (lines int, seen bool, err error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return 0, false, err
	}
	for _, l := range strings.Split(string(b), "\n") {
		if strings.HasPrefix(l, "VALUES=") {
			lines++
			seen = seen || strings.HasPrefix(l, prefix)
		}
	}
	return lines, seen, nil
}

// 11. continuous (Gradle only, docs/decisions.md#D20): buildguard
// --continuous around gradle --continuous classes on the live JVM. A
// change in a goes live; a cycle that breaks b with a new change in a shows
// the JVM nothing and holds the output; the fix shows both, by exact bytes;
// SIGINT ends the run and the Gradle client's process group.
func (r *laneRun) continuous(ctx context.Context) (err error) {
	r.log = r.p.log(continuousLog)
	// The previous scenario ended with no hold; a hold of another owner
	// would refuse the first cycle.
	if _, err := r.expectHold(ctx, "none"); err != nil {
		return err
	}
	run, err := startContinuous(continuousBuild(r.tools, continuousOwner), r.p.root, r.log)
	if err != nil {
		return r.fail(err, "starting buildguard --continuous")
	}
	defer func() {
		if err != nil {
			run.kill()
		}
	}()
	ev := &ContinuousEvidence{}
	want := func(n int, outcome string, released bool) error {
		cy, err := run.cycle(ctx, n)
		if err != nil {
			return r.fail(err, "cycle %d must end with its line and Gradle watching again", n)
		}
		if cy.Outcome != outcome || cy.Released != released {
			return r.fail(nil, "cycle %d: %q, want %s with output released=%v", n, cy.Line, outcome, released)
		}
		ev.Cycles = append(ev.Cycles, cy)
		return nil
	}
	// Cycle 1: the sources at 7:7 are up to date.
	if err := want(1, "ok", true); err != nil {
		return err
	}
	group, err := run.childGroup()
	if err != nil {
		return r.fail(err, "finding the Gradle client's process group")
	}
	run.group = group
	// Cycle 2: a change in a goes live.
	if err := setSources(r.p, sourceVersion{a: 8, b: 7}); err != nil {
		return r.fail(err, "writing v8 of a")
	}
	if err := want(2, "ok", true); err != nil {
		return err
	}
	if err := r.app.waitFor(ctx, "VALUES=8:7"); err != nil {
		r.log = r.app.log
		return r.fail(err, "the application must print VALUES=8:7 after cycle 2")
	}
	// Cycle 3: a new change in a, b broken: a compiles, b fails, nothing
	// of the cycle reaches the JVM.
	if err := setSources(r.p, sourceVersion{a: 9, broken: true}); err != nil {
		return r.fail(err, "writing v9 of a and a broken b")
	}
	if err := want(3, "failed", false); err != nil {
		return err
	}
	heldA, err := r.sha(r.p.classA())
	if err != nil {
		return err
	}
	if _, err := r.expectHold(ctx, "named"); err != nil {
		return err
	}
	if err := r.heldAfterFailedCycle(ctx, heldA); err != nil {
		return err
	}
	// Cycle 4: b fixed; the JVM shows a's change of cycle 3 and b's fix.
	if err := setSources(r.p, sourceVersion{a: 9, b: 9}); err != nil {
		return r.fail(err, "writing the fixed b")
	}
	if err := want(4, "ok", true); err != nil {
		return err
	}
	if err := r.app.waitFor(ctx, "VALUES=9:9"); err != nil {
		r.log = r.app.log
		return r.fail(err, "the application must print VALUES=9:9 after cycle 4")
	}
	for _, c := range []struct{ name, path string }{{"A", r.p.classA()}, {"B", r.p.classB()}} {
		sha, err := r.sha(c.path)
		if err != nil {
			return err
		}
		if c.name == "A" && sha != heldA {
			return r.fail(nil, "A.class changed in cycle 4 (a was up to date): %s, held %s", sha, heldA)
		}
		rc, err := r.pollApplied(ctx, c.name, sha)
		if err != nil {
			return err
		}
		if rc.observed != sha || rc.sessionID != r.session {
			return r.fail(nil, "receipt for %s: observedSha256 %s sessionId %s, want %s in %s", c.name, rc.observed, rc.sessionID, sha, r.session)
		}
	}
	if _, err := r.expectHold(ctx, "none"); err != nil {
		return err
	}
	// Stop: SIGINT between cycles ends the run with 130 and the Gradle
	// client's group.
	if err := run.cmd.Process.Signal(syscall.SIGINT); err != nil {
		return r.fail(err, "sending SIGINT to buildguard")
	}
	select {
	case <-run.exited:
	case <-ctx.Done():
		return r.fail(ctx.Err(), "buildguard must exit after SIGINT")
	case <-time.After(stopGrace):
		return r.fail(nil, "buildguard did not exit within %s of SIGINT", stopGrace)
	}
	run.stdin.Close()
	ev.ExitCode = run.cmd.ProcessState.ExitCode()
	if ev.ExitCode != 130 {
		return r.fail(nil, "buildguard must exit 130 after SIGINT, exited %d", ev.ExitCode)
	}
	if members, err := proc.GroupMembers(group); err != nil || len(members) != 0 {
		return r.fail(err, "the Gradle client's process group %d must be gone; members %v", group, members)
	}
	end := "buildguard: continuous build interrupted (interrupt) after 4 cycles; no output is held"
	if ok, err := r.logContains(end); err != nil {
		return err
	} else if !ok {
		return r.fail(nil, "the log must contain %q", end)
	}
	ev.EndLine = end
	b, err := os.ReadFile(r.log)
	if err != nil {
		return r.fail(err, "reading the log")
	}
	if all := parseCycles(b); len(all) != 4 {
		return r.fail(nil, "the run must have had 4 cycles, its log has %d", len(all))
	}
	r.continuousEv = ev
	return nil
}

// heldAfterFailedCycle waits until the JVM printed heldLines more VALUES
// lines after the failed cycle and requires that none showed a's new value,
// and that VERIFY of a's held bytes is not applied.
func (r *laneRun) heldAfterFailedCycle(ctx context.Context, heldA string) error {
	before, _, err := appLines(r.app.log, "VALUES=9:")
	if err != nil {
		return r.fail(err, "reading app.log")
	}
	deadline := time.NewTimer(readyTimeout)
	defer deadline.Stop()
	tick := time.NewTicker(pollInterval)
	defer tick.Stop()
	for {
		n, seen, err := appLines(r.app.log, "VALUES=9:")
		switch {
		case err != nil:
			return r.fail(err, "reading app.log")
		case seen:
			r.log = r.app.log
			return r.fail(nil, "app.log has a line starting VALUES=9: (the failed cycle's output went live)")
		case n >= before+heldLines:
			rc, err := r.agent.verify(ctx, "A", heldA)
			if err != nil {
				return r.fail(err, "VERIFY A %s", heldA)
			}
			if rc.status == "applied" {
				return r.fail(nil, "VERIFY A of the failed cycle's bytes must not be applied, it is")
			}
			return nil
		}
		select {
		case <-ctx.Done():
			return r.fail(ctx.Err(), "waiting for the JVM's lines after the failed cycle")
		case <-deadline.C:
			r.log = r.app.log
			return r.fail(errors.New("the JVM stopped printing"), "%d VALUES lines after the failed cycle within %s", heldLines, readyTimeout)
		case <-r.app.proc.Exited():
			return r.fail(ErrAppExited, "the application must run through the held cycle")
		case <-tick.C:
		}
	}
}
