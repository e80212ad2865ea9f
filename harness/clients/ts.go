//go:build unix

package clients

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"
)

// TSTestFile is the TypeScript lane's test program inside the npm project.
const TSTestFile = "acceptance.test.mjs"

// NpmCI is the install command of the TypeScript lane, run in its directory.
var NpmCI = []string{"npm", "ci", "--ignore-scripts", "--no-audit", "--no-fund"}

// Bounds of the TypeScript lane.
const (
	npmTimeout    = 5 * time.Minute
	tsLaneTimeout = 5 * time.Minute
)

// ErrNoNodeModules means the TypeScript lane's dependencies are not installed.
var ErrNoNodeModules = errors.New("node_modules missing: run (cd harness/clients/ts && npm ci --ignore-scripts --no-audit --no-fund)")

// TSConfig configures RunTSLane.
type TSConfig struct {
	// Lane is the TypeScript lane to run (stdio or HTTP).
	Lane TSLane
	// Dir is the npm project (harness/clients/ts). Required.
	Dir string
	// WorkDir is the lane's fresh directory. Required.
	WorkDir string
	// Binary and AgentJar are what the lane installs. Required.
	Binary, AgentJar string
	// Test is the test file inside Dir. Empty means TSTestFile.
	Test string
	// Install runs `npm ci` when node_modules is missing; false makes a
	// missing node_modules an ErrNoNodeModules failure.
	Install bool
	// Log receives npm's and node's output. Nil means io.Discard.
	Log io.Writer
	// SkipHold is the witness fault (CLIENT_FAULT=skip-hold); see LaneConfig.
	SkipHold bool
}

// EnsureNodeModules runs `npm ci --ignore-scripts --no-audit --no-fund` in
// dir when node_modules is missing.
func EnsureNodeModules(ctx context.Context, dir string, log io.Writer) error {
	if st, err := os.Stat(filepath.Join(dir, "node_modules", "@modelcontextprotocol", "sdk")); err == nil && st.IsDir() {
		return nil
	}
	ctx, cancel := context.WithTimeout(ctx, npmTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, NpmCI[0], NpmCI[1:]...)
	cmd.Dir = dir
	cmd.Stdout, cmd.Stderr = log, log
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("%s in %s: %w (Node 20 and npm are needed: apt-get install -y nodejs npm)", strings.Join(NpmCI, " "), dir, err)
	}
	return nil
}

// RunTSLane runs the TypeScript SDK lane: it installs the npm project if
// needed, then runs `node --test acceptance.test.mjs` with the binary, the
// agent jar and the lane's work directory in BUILDGUARD_BIN,
// BUILDGUARD_AGENT_JAR and CLIENT_WORK_DIR. The test does its own MCP calls
// and assertions and writes evaluation.json (and evidence.json on a pass)
// into the work directory, which RunTSLane reads back.
func RunTSLane(ctx context.Context, cfg TSConfig) LaneOutcome {
	name := cfg.Lane.Name()
	out := LaneOutcome{Lane: name, EvaluationPath: filepath.Join(cfg.WorkDir, "evaluation.json")}
	log := cfg.Log
	if log == nil {
		log = io.Discard
	}
	fail := func(err error) LaneOutcome {
		out.Error = fmt.Sprintf("lane %s: %v", name, err)
		return out
	}
	dir, err := filepath.Abs(cfg.Dir)
	if err != nil {
		return fail(err)
	}
	if cfg.Install {
		if err := EnsureNodeModules(ctx, dir, log); err != nil {
			return fail(err)
		}
	} else if _, err := os.Stat(filepath.Join(dir, "node_modules", "@modelcontextprotocol", "sdk")); err != nil {
		return fail(ErrNoNodeModules)
	}
	test := cfg.Test
	if test == "" {
		test = TSTestFile
	}
	ctx, cancel := context.WithTimeout(ctx, tsLaneTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, "node", "--test", "--test-reporter=spec", test)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "BUILDGUARD_BIN="+cfg.Binary, "BUILDGUARD_AGENT_JAR="+cfg.AgentJar, "CLIENT_WORK_DIR="+cfg.WorkDir, "CLIENT_LANE="+name)
	if cfg.Lane.HTTP {
		cmd.Env = append(cmd.Env, "CLIENT_TRANSPORT=http")
	}
	if cfg.SkipHold {
		cmd.Env = append(cmd.Env, "CLIENT_FAULT=skip-hold")
	}
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = 10 * time.Second
	var buf bytes.Buffer
	cmd.Stdout = io.MultiWriter(log, &buf)
	cmd.Stderr = io.MultiWriter(log, &buf)
	runErr := cmd.Run()
	ev, evErr := ReadEvaluation(out.EvaluationPath)
	out.Evaluation = ev
	switch {
	case evErr != nil:
		return fail(fmt.Errorf("node --test %s: %v; no evaluation.json: %v", test, runErr, evErr))
	case runErr != nil:
		msg := ev.Error
		if msg == "" {
			msg = lastLines(buf.String(), 15)
		}
		return fail(fmt.Errorf("node --test %s: %v: %s", test, runErr, msg))
	case !ev.Passed:
		return fail(fmt.Errorf("node --test passed but evaluation.json says not passed: %s", ev.Error))
	}
	out.EvidencePath = filepath.Join(cfg.WorkDir, "evidence.json")
	if _, err := os.Stat(out.EvidencePath); err != nil {
		return fail(fmt.Errorf("passed without evidence.json: %w", err))
	}
	out.Passed = true
	return out
}

func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}
