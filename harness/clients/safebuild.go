//go:build unix

package clients

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
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
	// safeBuildTimeoutMs is the timeoutMs of a safe build call: javac on a
	// loaded machine needs more than the other calls' 3 s.
	safeBuildTimeoutMs = "14000"
	// goneTimeout bounds the wait for a cancelled build's process to end.
	goneTimeout = 10 * time.Second
)

// WriteBuildConfig writes the project's .buildguard.json with the two
// builds, each a javac of Service.java into the watched classes directory.
func (p *Project) WriteBuildConfig() error {
	javac := append([]string{p.Javac}, p.javacArgs(filepath.Join(p.Src, "Service.java"))...)
	slow := append([]string{"sh", "-c", `echo "compiling Service"; "$0" "$@" || exit 1; echo $$ > build.pid; echo waiting; exec sleep 120`}, javac...)
	cfg := map[string]any{"builds": map[string]any{
		SafeBuildCompile: map[string]any{"command": append([]string{"sh", "-c", `echo "compiling Service"; exec "$0" "$@"`}, javac...)},
		SafeBuildSlow:    map[string]any{"command": slow},
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
