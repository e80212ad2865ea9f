//go:build unix

package clients

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/buildguard/buildguard/internal/testsupport/wait"
)

// The consumer project's builds in its .buildguard.json
// (docs/safe-build.md#2): "compile" compiles Service.java like
// Project.CompileService; "slow" compiles it, records its pid in
// build.pid, prints "waiting" and runs until it is stopped.
const (
	SafeBuildCompile = "compile"
	SafeBuildSlow    = "slow"
	// SafeBuildTurn compiles it between a "start PID" and an "end PID"
	// line, printed and appended to builds.log, inside a mkdir guard
	// (build.running): a second turn build that ran while one still ran
	// would print "overlap" and fail.
	SafeBuildTurn = "turn"
	// BuildsLogName is the turn builds' record in the project directory.
	BuildsLogName = "builds.log"
	// safeBuildTimeoutMs is the timeoutMs of a safe build call: javac on a
	// loaded machine needs more than the other calls' 3 s.
	safeBuildTimeoutMs = "14000"
	// goneTimeout bounds the wait for a cancelled build's process to end.
	goneTimeout = 10 * time.Second
)

// turnScript is the turn build's shell script (the same in
// ts/acceptance.test.mjs).
const turnScript = `mkdir build.running || { echo "overlap: build.running exists"; exit 1; }; echo "start $$" >> builds.log; echo "start $$"; "$0" "$@"; rc=$?; echo "end $$" >> builds.log; echo "end $$"; rmdir build.running; exit $rc`

// WriteBuildConfig writes the project's .buildguard.json with the three
// builds, each a javac of Service.java into the watched classes directory.
func (p *Project) WriteBuildConfig() error {
	javac := append([]string{p.Javac}, p.javacArgs(filepath.Join(p.Src, "Service.java"))...)
	slow := append([]string{"sh", "-c", `echo "compiling Service"; "$0" "$@" || exit 1; echo $$ > build.pid; echo waiting; exec sleep 120`}, javac...)
	turn := append([]string{"sh", "-c", turnScript}, javac...)
	cfg := map[string]any{"builds": map[string]any{
		SafeBuildCompile: map[string]any{"command": append([]string{"sh", "-c", `echo "compiling Service"; exec "$0" "$@"`}, javac...)},
		SafeBuildSlow:    map[string]any{"command": slow},
		SafeBuildTurn:    map[string]any{"command": turn},
	}, "defaultBuild": SafeBuildCompile}
	data, err := json.MarshalIndent(cfg, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(p.Root, ".buildguard.json"), data, 0o644)
}

// progressLog records the progress notifications of one call and whether
// any came after its result.
type progressLog struct {
	mu    sync.Mutex
	done  bool
	late  int
	steps []float64
	msgs  []string
}

func (l *progressLog) add(progress float64, message string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.done {
		l.late++
	}
	l.steps = append(l.steps, progress)
	l.msgs = append(l.msgs, message)
}

// finish marks the result as received and checks what came before it: at
// least one notification, growing.
func (l *progressLog) finish() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.done = true
	if len(l.steps) == 0 {
		return errors.New("no notifications/progress before the result")
	}
	for i := 1; i < len(l.steps); i++ {
		if l.steps[i] <= l.steps[i-1] {
			return fmt.Errorf("progress went from %v to %v", l.steps[i-1], l.steps[i])
		}
	}
	return nil
}

// safeBuild calls reclazz_safe_build with a progress token and the call's
// checks; the result is the data object.
func (r *runner) safeBuild(ctx context.Context, build string, want expect, log *progressLog) (map[string]any, error) {
	r.calls++
	n := r.calls
	tool := "reclazz_safe_build"
	fail := func(format string, a ...any) error {
		return fmt.Errorf("call #%d %s: %s", n, tool, fmt.Sprintf(format, a...))
	}
	full := map[string]any{"build": build, "timeoutMs": safeBuildTimeoutMs}
	r.rec.Call(tool)
	r.called[tool]++
	res, err := r.client.CallProgress(ctx, tool, full, log.add)
	if err != nil {
		return nil, fail("%v", err)
	}
	if err := log.finish(); err != nil {
		return nil, fail("%v", err)
	}
	return r.check(tool, full, res, want, fail)
}

// changedService returns the changedClasses entry of Service and whether
// all changed classes were applied.
func changedService(d map[string]any) (sha, status string, all bool) {
	cc, _ := d["changedClasses"].(map[string]any)
	all, _ = cc["allApplied"].(bool)
	list, _ := cc["classes"].([]any)
	for _, e := range list {
		if m, _ := e.(map[string]any); m["className"] == "Service" {
			sha, _ = m["sha256"].(string)
			status, _ = m["status"].(string)
		}
	}
	return sha, status, all
}

// 8. safe-build-progress: one reclazz_safe_build call with a progress token
// builds the new Service; notifications/progress arrive before the result,
// which is ok with Service applied with exactly the built bytes, and the
// live application shows the new value.
func (r *runner) safeBuildProgress(ctx context.Context) error {
	if err := r.proj.WriteBuildConfig(); err != nil {
		return err
	}
	value := r.last.Value + 1
	if err := r.proj.WriteService(value); err != nil {
		return err
	}
	log := &progressLog{}
	d, err := r.safeBuild(ctx, SafeBuildCompile, wantOK, log)
	if err != nil {
		return err
	}
	if d == nil || d["outcome"] != "ok" {
		return fmt.Errorf("safe build: %v", d)
	}
	built, err := r.proj.ClassSHA("Service")
	if err != nil {
		return err
	}
	r.h[value] = built
	sha, status, all := changedService(d)
	if sha != built || status != "applied" || !all {
		return fmt.Errorf("changedClasses: Service %s %s (allApplied %v), want the built bytes %s applied", sha, status, all, built)
	}
	if !strings.HasPrefix(log.msgs[0], "compiling Service") {
		return fmt.Errorf("first progress message %q, want the build's first line", log.msgs[0])
	}
	return r.proveReload(ctx, built, value)
}

// 9. safe-build-cancel: a build cancelled after its compile (the client
// cancels once the build recorded its pid) is stopped with its process, the
// output stays held (the application keeps the old value although the new
// class file is on disk), and the next build of the project releases a
// fixed version.
func (r *runner) safeBuildCancel(ctx context.Context) error {
	old := r.last.Value
	if err := r.proj.WriteService(old + 1); err != nil {
		return err
	}
	pidFile := filepath.Join(r.proj.Root, "build.pid")
	os.Remove(pidFile)
	cctx, cancel := context.WithCancel(ctx)
	defer cancel()
	log := &progressLog{}
	r.calls++
	r.rec.Call("reclazz_safe_build")
	r.called["reclazz_safe_build"]++
	var pids []int
	var pidErr error
	watched := make(chan struct{})
	go func() {
		defer close(watched)
		pids, pidErr = wait.PIDFileWithin(pidFile, CallTimeout)
		cancel()
	}()
	_, err := r.client.CallProgress(cctx, "reclazz_safe_build", map[string]any{"build": SafeBuildSlow, "timeoutMs": "60000"}, log.add)
	cancel()
	<-watched
	if pidErr != nil {
		return fmt.Errorf("the slow build never recorded its pid: %w", pidErr)
	}
	if !errors.Is(err, context.Canceled) {
		return fmt.Errorf("cancelled safe build returned %v, want the cancellation", err)
	}
	if left := wait.GoneWithin(goneTimeout, pids...); len(left) > 0 {
		return fmt.Errorf("the cancelled build (pid %v) still runs %s after the cancellation", left, goneTimeout)
	}
	deadline := time.Now().Add(goneTimeout)
	doc, err := r.call(ctx, "reclazz_doctor", nil, wantOK)
	if err != nil {
		return err
	}
	if doc != nil && doc["buildHold"] != "named" {
		return fmt.Errorf("after the cancelled build DOCTOR shows buildHold %v, want named", doc["buildHold"])
	}
	if err := r.held(ctx, old); err != nil {
		return err
	}
	// The next build is refused while the cancelled one still finishes
	// (one build at a time), then releases a fixed version.
	if err := r.proj.WriteService(old + 2); err != nil {
		return err
	}
	for {
		log := &progressLog{}
		d, err := r.safeBuild(ctx, SafeBuildCompile, wantEither, log)
		if err != nil {
			return err
		}
		if d != nil && d["outcome"] == "refused" && time.Now().Before(deadline) {
			if err := sleep(ctx, receiptPollInterval); err != nil {
				return err
			}
			continue
		}
		if d == nil || d["outcome"] != "ok" {
			return fmt.Errorf("the build after the cancelled one: %v", d)
		}
		break
	}
	built, err := r.proj.ClassSHA("Service")
	if err != nil {
		return err
	}
	r.h[old+2] = built
	return r.proveReload(ctx, built, old+2)
}

// turnRun is one run of the turn build, from builds.log.
type turnRun struct{ pid string }

// readTurnRuns reads builds.log: each run is a "start PID" line directly
// followed by its "end PID" line; any other order means two runs overlapped.
func readTurnRuns(path string) ([]turnRun, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	lines := strings.Split(strings.TrimSuffix(string(b), "\n"), "\n")
	if len(lines)%2 != 0 {
		return nil, fmt.Errorf("%s has %d lines, want start/end pairs: %q", filepath.Base(path), len(lines), lines)
	}
	var runs []turnRun
	for i := 0; i < len(lines); i += 2 {
		pid, ok := strings.CutPrefix(lines[i], "start ")
		if !ok || pid == "" || lines[i+1] != "end "+pid {
			return nil, fmt.Errorf("%s: the builds overlapped or a build did not end: %q", filepath.Base(path), lines)
		}
		runs = append(runs, turnRun{pid: pid})
	}
	return runs, nil
}

// 10. concurrent-safe-builds: a second client of the lane's kind (its own
// buildguard mcp: a second stdio process, or a second --http server) and the
// lane's client call reclazz_safe_build at the same moment. Both end ok, and
// never ran at once (docs/decisions.md#D18): the second waited its turn in
// the project's build queue, or joined the first. What the clients saw
// proves it: each result's output names the run (start PID … end PID) and
// builds.log holds the runs one after the other, start and end adjacent;
// the mkdir guard in the build would have failed an overlapping run. The
// run that built the new bytes reports Service applied with them, the other
// reports no other bytes, and the live application shows the new value.
func (r *runner) concurrentSafeBuilds(ctx context.Context) error {
	value := r.last.Value + 1
	if err := r.proj.WriteService(value); err != nil {
		return err
	}
	logPath := filepath.Join(r.proj.Root, BuildsLogName)
	os.Remove(logPath)
	second, err := r.cfg.Dial(ctx, r.server())
	if err != nil {
		return fmt.Errorf("second client: %w", err)
	}
	closed := false
	defer func() {
		if !closed {
			second.Close()
		}
	}()
	if v := second.ProtocolVersion(); v != r.version {
		return fmt.Errorf("second client negotiated %s, the first %s", v, r.version)
	}
	type answer struct {
		res  CallResult
		err  error
		log  *progressLog
		args map[string]any
	}
	answers := []*answer{{log: &progressLog{}}, {log: &progressLog{}}}
	start := make(chan struct{})
	var wg sync.WaitGroup
	for i, c := range []Client{r.client, second} {
		a := answers[i]
		a.args = map[string]any{"build": SafeBuildTurn, "timeoutMs": safeBuildTimeoutMs}
		r.calls++
		r.rec.Call("reclazz_safe_build")
		r.called["reclazz_safe_build"]++
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			a.res, a.err = c.CallProgress(ctx, "reclazz_safe_build", a.args, a.log.add)
		}()
	}
	close(start)
	wg.Wait()
	built, err := r.proj.ClassSHA("Service")
	if err != nil {
		return err
	}
	r.h[value] = built
	runs, err := readTurnRuns(logPath)
	if err != nil {
		return err
	}
	if len(runs) != 1 && len(runs) != 2 {
		return fmt.Errorf("%d runs of the turn build for two calls, want 2 (one waited) or 1 (one joined)", len(runs))
	}
	ran := map[string]map[string]any{}
	for i, a := range answers {
		fail := func(format string, x ...any) error {
			return fmt.Errorf("client %d reclazz_safe_build: %s", i+1, fmt.Sprintf(format, x...))
		}
		if a.err != nil {
			return fail("%v", a.err)
		}
		if err := a.log.finish(); err != nil {
			return fail("%v", err)
		}
		d, err := r.check("reclazz_safe_build", a.args, a.res, wantOK, fail)
		if err != nil {
			return err
		}
		if d == nil || d["outcome"] != "ok" {
			return fail("outcome %v, want ok", d["outcome"])
		}
		out, _ := d["output"].(map[string]any)
		tail, _ := out["tail"].(string)
		lines := strings.Split(tail, "\n")
		var pid string
		for _, run := range runs {
			if slices.Contains(lines, "start "+run.pid) && slices.Contains(lines, "end "+run.pid) {
				pid = run.pid
			}
		}
		if pid == "" || strings.Contains(tail, "overlap") {
			return fail("output %q names none of the runs in %s %v", tail, BuildsLogName, runs)
		}
		if len(runs) == 2 && ran[pid] != nil {
			return fail("both results name run %s, but two runs happened", pid)
		}
		ran[pid] = d
	}
	for i, run := range runs {
		sha, status, all := changedService(ran[run.pid])
		if !all || (i == 0 && (sha != built || status != "applied")) || (sha != "" && (sha != built || status != "applied")) {
			return fmt.Errorf("run %d (pid %s) changedClasses: Service %q %q (allApplied %v), want the built bytes %s applied", i+1, run.pid, sha, status, all, built)
		}
	}
	if se, ok := second.(interface{ ServerStderr() string }); ok {
		if out := se.ServerStderr(); out != "" {
			return fmt.Errorf("the second buildguard mcp wrote to stderr: %q", out)
		}
	}
	closed = true
	if err := second.Close(); err != nil {
		return fmt.Errorf("closing the second client: %w", err)
	}
	return r.proveReload(ctx, built, value)
}
