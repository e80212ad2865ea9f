//go:build unix

package hostlanes

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/buildguard/buildguard/harness/fakeagent"
	"github.com/buildguard/buildguard/harness/hostlanes/model"
)

// Bounds of a lane.
const (
	// hostTimeout bounds the host's one-shot run, build included.
	hostTimeout = 4 * time.Minute
	// initTimeout bounds `buildguard init`.
	initTimeout = 30 * time.Second
	// settleTimeout bounds the wait for the host's process group to end by
	// itself after the host exited: buildguard mcp waits up to 30 s for its
	// running builds at stdin EOF (docs/safe-build.md#6).
	settleTimeout = 35 * time.Second
)

// ErrLaneFailed means a lane ran and its model missed what it must see; the
// record says which check failed.
var ErrLaneFailed = errors.New("host lane failed")

// Lane is one host running one scenario: its directories and the model's URL.
type Lane struct {
	// Dir is the lane's work directory; Home and Project lie below it.
	Dir, Home, Project string
	// ModelURL is the scripted model's base URL.
	ModelURL string
	// BinDir holds the buildguard binary; it leads the PATH of init and of
	// the host, so the host finds the portable entry's `buildguard` as a
	// user's host finds the installed one (docs/hosts.md).
	BinDir string
}

// LaneConfig configures RunLane.
type LaneConfig struct {
	// WorkDir is a fresh directory for the lane; required.
	WorkDir string
	// Buildguard is the buildguard binary init writes into the host's entry; required.
	Buildguard string
	// HostBin is the host's installed command (Install); required.
	HostBin string
	// Host is the host.
	Host Host
	// Scenario is what the lane asks the host to do.
	Scenario Scenario
}

// Record is what one lane did and what its model received; record.json.
type Record struct {
	Host     string `json:"host"`
	Package  string `json:"package"`
	Version  string `json:"version"`
	Scenario string `json:"scenario"`
	// Command is the host's one-shot command line, the prompt included.
	Command []string `json:"command"`
	// FirstError is javac's first error for the project, as javac printed it.
	FirstError Diagnostic `json:"firstError"`
	// ServiceSHA256 is the SHA-256 of classes/Service.class after the run:
	// the bytes the passing build wrote.
	ServiceSHA256 string `json:"serviceSha256"`
	// AgentBuilds are the BUILD command lines the agent received, owner
	// tokens and all; SlowDone says the long build compiled to its end.
	AgentBuilds []string `json:"agentBuilds"`
	// FirstBuildOK is when the agent got its first BUILD ok; CallAsked is
	// when the model asked for the safe build.
	FirstBuildOK time.Time `json:"firstBuildOk"`
	CallAsked    time.Time `json:"callAsked"`
	SlowDone     bool      `json:"slowDone"`
	// AheadExit is the exit code of the build run ahead of the host's
	// (queued-build); 0 when none ran.
	AheadExit int `json:"aheadExit"`
	// Presented is how the host presented buildguard to the model.
	Presented Presented `json:"presented"`
	// Requests counts the requests the host sent the model; Answers lists
	// what the model answered to each, in order.
	Requests int      `json:"requests"`
	Answers  []string `json:"answers"`
	// Received is what the host handed the model back, one per tool call;
	// SafeBuildFrom is the index of the first safe build's result in it.
	Received      []model.ToolResult `json:"received"`
	SafeBuildFrom int                `json:"safeBuildFrom"`
	// Resumes are the build IDs the model resumed, in order.
	Resumes []string `json:"resumes,omitempty"`
	Checks  []Check  `json:"checks"`
	// ExitCode is the host's exit code; -1 when it was killed.
	ExitCode  int    `json:"exitCode"`
	ElapsedMs int64  `json:"elapsedMs"`
	Started   string `json:"started"`
	Error     string `json:"error,omitempty"`
}

// Check is one thing the model must have seen.
type Check struct {
	Name   string `json:"name"`
	OK     bool   `json:"ok"`
	Detail string `json:"detail"`
}

// Passed says whether the lane ran and every check held.
func (r *Record) Passed() bool {
	if r.Error != "" || len(r.Checks) == 0 {
		return false
	}
	for _, c := range r.Checks {
		if !c.OK {
			return false
		}
	}
	return true
}

// RunLane runs cfg.Host on cfg.Scenario in cfg.WorkDir and
// writes record.json, requests.json, host.stdout and host.stderr there. The
// error wraps ErrLaneFailed when a check failed; other errors mean the lane
// could not run (the record says where it stopped).
func RunLane(ctx context.Context, cfg LaneConfig) (*Record, error) {
	h := cfg.Host
	rec := &Record{Host: h.Name, Package: h.Package, Version: h.Version, Scenario: cfg.Scenario.Name,
		ExitCode: -1, Started: time.Now().UTC().Format(time.RFC3339)}
	start := time.Now()
	err := runLane(ctx, cfg, rec)
	rec.ElapsedMs = time.Since(start).Milliseconds()
	if err != nil {
		rec.Error = err.Error()
	}
	if werr := writeJSON(filepath.Join(cfg.WorkDir, "record.json"), rec); werr != nil {
		return rec, errors.Join(err, werr)
	}
	if err == nil && !rec.Passed() {
		err = fmt.Errorf("%w: %s on %s: %s", ErrLaneFailed, h.Name, rec.Scenario, failedChecks(rec))
	}
	return rec, err
}

// failedChecks names the checks that failed, with their details.
func failedChecks(rec *Record) string {
	var s []string
	for _, c := range rec.Checks {
		if !c.OK {
			s = append(s, c.Name+": "+c.Detail)
		}
	}
	return strings.Join(s, "; ")
}

// runLane does RunLane's work, filling rec.
func runLane(ctx context.Context, cfg LaneConfig, rec *Record) error {
	l := &Lane{Dir: cfg.WorkDir, Home: filepath.Join(cfg.WorkDir, "home"), Project: filepath.Join(cfg.WorkDir, "project with spaces"), BinDir: filepath.Dir(cfg.Buildguard)}
	for _, d := range []string{l.Home, l.Project} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			return fmt.Errorf("creating the lane's directories: %w", err)
		}
	}
	first, err := writeProject(ctx, l.Project)
	if err != nil {
		return err
	}
	rec.FirstError = first
	agent, err := startAgent(l.Project)
	if err != nil {
		return err
	}
	defer agent.Close()
	initArgs := []string{"init", "--host", cfg.Host.Name}
	script := model.Script{Calls: cfg.Host.Calls(cfg.Scenario.Build), Final: "Done."}
	if d := cfg.Scenario.AnswerWithin; d > 0 {
		initArgs, script.Resumes = append(initArgs, "--answer-within", d.String()), maxResumes
	}
	if out, err := run(ctx, initTimeout, l.Project, hostEnv(l, nil), cfg.Buildguard, initArgs...); err != nil {
		return fmt.Errorf("buildguard %s: %w: %s", strings.Join(initArgs, " "), err, out)
	}
	srv, err := model.Start(model.Config{Script: script})
	if err != nil {
		return err
	}
	defer srv.Close()
	l.ModelURL = srv.URL()
	if err := cfg.Host.Setup(l); err != nil {
		return fmt.Errorf("setting up %s: %w", cfg.Host.Name, err)
	}
	args := cfg.Host.Args(l, cfg.Scenario.Prompt)
	rec.Command = append([]string{cfg.Host.Command}, args...)
	env := cfg.Host.Env(l)
	if cfg.Scenario.ToolTimeout > 0 {
		more, err := cfg.Host.SetToolTimeout(l, cfg.Scenario.ToolTimeout)
		if err != nil {
			return fmt.Errorf("setting %s's tool timeout: %w", cfg.Host.Name, err)
		}
		env = append(env, more...)
	}
	var before *ahead
	if cfg.Scenario.Ahead != "" {
		if before, err = startAhead(ctx, l, cfg.Buildguard, cfg.Scenario.Ahead, agent); err != nil {
			return err
		}
		defer func() {
			if before != nil {
				_, _ = before.finish(l.Dir, 0)
			}
		}()
	}
	var left bool
	rec.ExitCode, left, err = runHost(ctx, l, cfg.HostBin, args, env)
	if before != nil {
		var aerr error
		rec.AheadExit, aerr = before.finish(l.Dir, aheadTimeout)
		before = nil
		err = errors.Join(err, aerr)
	}
	reqs := srv.Requests()
	if werr := writeJSON(filepath.Join(l.Dir, "requests.json"), reqs); werr != nil {
		return errors.Join(err, werr)
	}
	rec.Requests = len(reqs)
	for _, r := range reqs {
		rec.Answers = append(rec.Answers, r.Answer)
		if r.Resume != "" {
			rec.Resumes = append(rec.Resumes, r.Resume)
		}
	}
	rec.SafeBuildFrom = len(script.Calls) - 1
	rec.Received, _ = model.LastResults(reqs)
	rec.FirstBuildOK = agent.firstOK()
	for _, r := range reqs {
		if calls := cfg.Host.Calls(cfg.Scenario.Build); r.Answer == "call "+calls[len(calls)-1].Name && rec.CallAsked.IsZero() {
			rec.CallAsked = r.Time
		}
	}
	for _, c := range agent.Commands() {
		if strings.HasPrefix(c, "BUILD ") {
			rec.AgentBuilds = append(rec.AgentBuilds, c)
		}
	}
	_, serr := os.Stat(filepath.Join(l.Project, SlowDone))
	rec.SlowDone = serr == nil
	if b, err := os.ReadFile(filepath.Join(l.Project, "classes", "Service.class")); err == nil {
		rec.ServiceSHA256 = fmt.Sprintf("%x", sha256.Sum256(b))
	}
	rec.Checks = scenarioChecks(rec, cfg.Scenario, len(cfg.Host.Calls(cfg.Scenario.Build)))
	calls := cfg.Host.Calls(cfg.Scenario.Build)
	presented, p := presentedChecks(reqs, calls[len(calls)-1].Name)
	rec.Checks, rec.Presented = append(rec.Checks, presented...), p
	settled := Check{Name: "host-children-ended", OK: !left, Detail: "the host's process group emptied by itself"}
	if left {
		settled.Detail = fmt.Sprintf("the host's process group still ran %v after the host and was killed", settleTimeout)
	}
	rec.Checks = append(rec.Checks, settled, nothingLeft(l.Dir))
	return err
}

// laneAgent is the fake agent of a lane and the time it got its first
// BUILD ok.
type laneAgent struct {
	*fakeagent.Server
	mu     sync.Mutex
	okTime time.Time
}

// firstOK is when the agent got its first BUILD ok; zero when it got none.
func (a *laneAgent) firstOK() time.Time {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.okTime
}

// startAgent starts the fake agent for the project: its working
// directory, watching classes/, and on an acknowledged BUILD ok it takes
// up classes/Service.class as its watcher would and reloads it, so the
// receipt of the bytes the build wrote is applied.
func startAgent(project string) (*laneAgent, error) {
	classes := filepath.Join(project, "classes")
	a := &laneAgent{}
	accept := func(context.Context, string) fakeagent.Outcome {
		path := filepath.Join(classes, "Service.class")
		if data, err := os.ReadFile(path); err == nil {
			a.AddPendingClass("Service", path, data)
		}
		return fakeagent.AcceptSuccess
	}
	onCommand := func(_ int, line string) {
		a.mu.Lock()
		defer a.mu.Unlock()
		if strings.HasPrefix(line, "BUILD ok") && a.okTime.IsZero() {
			a.okTime = time.Now().UTC()
		}
	}
	srv, err := fakeagent.Start(fakeagent.Config{PortFile: filepath.Join(project, ".reclazz", "agent.port"),
		Doctor:     fakeagent.Evidence{WorkingDirectory: project, WatchedDirectories: []string{classes}},
		Acceptance: accept, OnCommand: onCommand})
	if err != nil {
		return nil, fmt.Errorf("starting the fake agent: %w", err)
	}
	a.Server = srv
	return a, nil
}

// runHost runs the host's one-shot command in the project with a private
// home, its output in host.stdout and host.stderr. When it has ended, or
// hostTimeout passed and it was killed, its process group gets
// settleTimeout to end by itself before it is killed; left says it had to
// be. It returns the exit code.
func runHost(parent context.Context, l *Lane, bin string, args, env []string) (code int, left bool, err error) {
	ctx, cancel := context.WithTimeout(parent, hostTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Dir = l.Project
	cmd.Env = hostEnv(l, env)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	group(cmd)
	err = cmd.Run()
	left = settleGroup(cmd, settleTimeout)
	werr := errors.Join(os.WriteFile(filepath.Join(l.Dir, "host.stdout"), stdout.Bytes(), 0o644),
		os.WriteFile(filepath.Join(l.Dir, "host.stderr"), stderr.Bytes(), 0o644))
	code = -1
	if cmd.ProcessState != nil {
		code = cmd.ProcessState.ExitCode()
	}
	switch {
	case parent.Err() != nil:
		return code, left, errors.Join(fmt.Errorf("%s stopped (killed): %w", filepath.Base(bin), parent.Err()), werr)
	case ctx.Err() != nil:
		return code, left, errors.Join(fmt.Errorf("%s did not end within %v (killed)", filepath.Base(bin), hostTimeout), werr)
	}
	var exit *exec.ExitError
	if err != nil && !errors.As(err, &exit) {
		return code, left, errors.Join(fmt.Errorf("running %s: %w", filepath.Base(bin), err), werr)
	}
	return code, left, werr
}

// hostEnv is this process's environment without anything that would reach
// a real account or the user's own settings, with HOME set to the lane's
// home and extra added.
func hostEnv(l *Lane, extra []string) []string {
	var env []string
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		switch {
		case k == "PATH" && l.BinDir != "":
			kv = "PATH=" + l.BinDir + string(os.PathListSeparator) + strings.TrimPrefix(kv, "PATH=")
		case k == "HOME", k == "CODEX_HOME", k == "GEMINI_CLI_HOME",
			strings.HasPrefix(k, "ANTHROPIC_"), strings.HasPrefix(k, "CLAUDE_"), strings.HasPrefix(k, "OPENAI_"),
			strings.HasPrefix(k, "GEMINI_"), strings.HasPrefix(k, "GOOGLE_"), strings.HasPrefix(k, "XDG_"):
			continue
		}
		env = append(env, kv)
	}
	return append(append(env, "HOME="+l.Home), extra...)
}

// writeJSON writes v indented to path.
func writeJSON(path string, v any) error {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(path, append(b, '\n'), 0o644)
}
