//go:build unix

package clients

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// ErrLaneFailed means at least one lane of the matrix failed; the outcomes
// say which, where and why.
var ErrLaneFailed = errors.New("client lane failed")

// TSLaneName is the TypeScript SDK lane.
const TSLaneName = "ts-sdk"

// MatrixConfig configures RunMatrix.
type MatrixConfig struct {
	// WorkDir is the run's fresh directory; each lane gets WorkDir/<lane>. Required.
	WorkDir string
	// Binary and AgentJar are what every lane installs. Required.
	Binary, AgentJar string
	// Only selects lanes by name; nil means all.
	Only map[string]bool
	// TSDir is the npm project of the TypeScript lane (harness/clients/ts).
	// Empty means the TypeScript lane is not run.
	TSDir string
	// Log receives progress and the PASS/FAIL lines. Nil means io.Discard.
	Log io.Writer
}

// LaneOutcome is one lane's result.
type LaneOutcome struct {
	Lane           string
	Passed         bool
	Error          string
	Evaluation     Evaluation
	EvaluationPath string
	EvidencePath   string
	Elapsed        time.Duration
}

// MatrixResult is a whole run.
type MatrixResult struct {
	WorkDir string
	Host    map[string]any
	Lanes   []LaneOutcome
	Started time.Time
	// Witness holds the hold-witness lanes when WitnessRun; WitnessError is
	// set when the witness did not fail as required.
	Witness      []LaneOutcome
	WitnessRun   bool
	WitnessError string
}

// LaneNames lists every lane in run order.
func LaneNames() []string {
	var n []string
	for _, l := range GoSDKLanes {
		n = append(n, l.Name())
	}
	n = append(n, TasksLanes...)
	for _, l := range TSLanes {
		n = append(n, l.Name())
	}
	return n
}

// tsLane returns the TypeScript lane named name.
func tsLane(name string) (TSLane, bool) {
	for _, l := range TSLanes {
		if l.Name() == name {
			return l, true
		}
	}
	return TSLane{}, false
}

// RunMatrix runs the selected lanes one after another (one JVM each) and
// prints `PASS <lane>: 9 scenarios …` or `FAIL <lane>: …` per lane. It
// returns ErrLaneFailed (wrapped, naming the lanes) when any lane failed.
func RunMatrix(ctx context.Context, cfg MatrixConfig) (MatrixResult, error) {
	log := cfg.Log
	if log == nil {
		log = io.Discard
	}
	res := MatrixResult{WorkDir: cfg.WorkDir, Host: HostMetadata(ctx), Started: time.Now().UTC()}
	if _, err := os.Stat(cfg.WorkDir); err == nil {
		return res, fmt.Errorf("work dir %s exists; use a fresh one to keep earlier evidence", cfg.WorkDir)
	}
	if err := os.MkdirAll(cfg.WorkDir, 0o755); err != nil {
		return res, err
	}
	var failed []string
	for _, name := range LaneNames() {
		if cfg.Only != nil && !cfg.Only[name] {
			continue
		}
		ts, isTS := tsLane(name)
		if isTS && cfg.TSDir == "" {
			continue
		}
		if err := ctx.Err(); err != nil {
			return res, fmt.Errorf("matrix interrupted before lane %s: %w", name, err)
		}
		fmt.Fprintf(log, "clients: lane %s\n", name)
		t0 := time.Now()
		var out LaneOutcome
		if isTS {
			out = RunTSLane(ctx, TSConfig{Lane: ts, Install: true, Dir: cfg.TSDir, WorkDir: filepath.Join(cfg.WorkDir, name), Binary: cfg.Binary, AgentJar: cfg.AgentJar, Log: log})
		} else {
			out = runGoLane(ctx, cfg, name, res.Host)
		}
		out.Elapsed = time.Since(t0)
		res.Lanes = append(res.Lanes, out)
		if out.Passed {
			s := out.Evaluation.Summary
			fmt.Fprintf(log, "PASS %s: %d scenarios, %s, %d tool calls, %d negative witnesses, 0 false completions, %.1fs\n",
				name, len(Scenarios), out.Evaluation.Metadata["protocolVersion"], s.ToolCalls, s.NegativeWitnesses, out.Elapsed.Seconds())
		} else {
			failed = append(failed, name)
			fmt.Fprintf(log, "FAIL %s: %s (see %s)\n", name, out.Error, out.EvaluationPath)
		}
	}
	if len(failed) > 0 {
		return res, fmt.Errorf("%w: %s", ErrLaneFailed, strings.Join(failed, ", "))
	}
	return res, nil
}

func runGoLane(ctx context.Context, cfg MatrixConfig, name string, host map[string]any) LaneOutcome {
	var lane LaneConfig
	for _, l := range GoSDKLanes {
		if l.Name() == name {
			lane = GoSDKLane(l)
			client := "go-sdk CommandTransport"
			if l.HTTP {
				client = "go-sdk StreamableClientTransport (mcp --http)"
			}
			lane.Metadata = map[string]any{"client": client, "sdk": GoSDKModule + " " + GoSDKVersion(), "requestedVersion": l.Version}
		}
	}
	for _, l := range TasksLanes {
		if l == name {
			lane = TasksLane(name)
			lane.Metadata = map[string]any{"client": "buildguard TasksClient (written from SEP-2663; raw JSON-RPC, " + strings.TrimPrefix(name, "tasks-") + ")", "requestedVersion": Version20260728}
		}
	}
	for k, v := range host {
		lane.Metadata[k] = v
	}
	lane.WorkDir, lane.Binary, lane.AgentJar = filepath.Join(cfg.WorkDir, name), cfg.Binary, cfg.AgentJar
	rep, err := RunLane(ctx, lane)
	out := LaneOutcome{Lane: name, Passed: err == nil, Evaluation: rep.Evaluation, EvaluationPath: rep.EvaluationPath, EvidencePath: rep.EvidencePath}
	if err != nil {
		out.Error = err.Error()
	}
	return out
}

// ReadEvaluation decodes an evaluation.json.
func ReadEvaluation(path string) (Evaluation, error) {
	var ev Evaluation
	b, err := os.ReadFile(path)
	if err != nil {
		return ev, err
	}
	if err := json.Unmarshal(b, &ev); err != nil {
		return ev, fmt.Errorf("decoding %s: %w", path, err)
	}
	return ev, nil
}

// LoadMatrix reads a finished run back from its work directory: each lane's
// evaluation.json (a lane passed only when its evaluation says so and its
// evidence.json exists) and the hold witness under witness/. The matrix doc
// is written from this, so it states only what the files record.
func LoadMatrix(workDir string) (MatrixResult, error) {
	res := MatrixResult{WorkDir: workDir, Host: map[string]any{}}
	st, err := os.Stat(workDir)
	if err != nil {
		return res, fmt.Errorf("reading the run: %w", err)
	}
	res.Started = st.ModTime().UTC()
	if _, stamp, ok := strings.Cut(filepath.Base(workDir), "-"); ok {
		if t, err := time.Parse("20060102T150405Z", stamp); err == nil {
			res.Started = t
		}
	}
	for _, name := range LaneNames() {
		out, ok, err := loadLane(filepath.Join(workDir, name), name)
		if err != nil {
			return res, err
		}
		if !ok {
			continue
		}
		res.Lanes = append(res.Lanes, out)
		for _, k := range []string{"platform", "arch", "os", "kernel", "go", "jdk"} {
			if _, isTS := tsLane(name); isTS {
				continue
			}
			if v, ok := out.Evaluation.Metadata[k]; ok && res.Host[k] == nil {
				res.Host[k] = v
			}
		}
	}
	if len(res.Lanes) == 0 {
		return res, fmt.Errorf("no lane evaluation.json under %s", workDir)
	}
	var werrs []error
	for _, name := range []string{GoSDKLaneName(Version20250618), TSLaneName} {
		out, ok, err := loadLane(filepath.Join(workDir, "witness", name), name)
		if err != nil {
			return res, err
		}
		if !ok {
			continue
		}
		res.WitnessRun = true
		res.Witness = append(res.Witness, out)
		if err := CheckHoldWitness(out); err != nil {
			werrs = append(werrs, err)
		}
	}
	if err := errors.Join(werrs...); err != nil {
		res.WitnessError = err.Error()
	}
	return res, nil
}

// loadLane reads one lane directory; ok is false when the lane did not run.
func loadLane(dir, name string) (LaneOutcome, bool, error) {
	out := LaneOutcome{Lane: name, EvaluationPath: filepath.Join(dir, "evaluation.json")}
	if _, err := os.Stat(dir); err != nil {
		return out, false, nil
	}
	ev, err := ReadEvaluation(out.EvaluationPath)
	if err != nil {
		out.Error = fmt.Sprintf("lane %s: no evaluation.json: %v", name, err)
		return out, true, nil
	}
	out.Evaluation = ev
	out.Elapsed = time.Duration(ev.Summary.ElapsedMs) * time.Millisecond
	evidence := filepath.Join(dir, "evidence.json")
	_, evErr := os.Stat(evidence)
	switch {
	case ev.Passed && evErr == nil:
		out.Passed, out.EvidencePath = true, evidence
	case ev.Passed:
		out.Error = fmt.Sprintf("lane %s: evaluation.json says passed but there is no evidence.json", name)
	case ev.Error != "":
		out.Error = fmt.Sprintf("lane %s: %s", name, ev.Error)
	default:
		out.Error = fmt.Sprintf("lane %s: not passed", name)
	}
	return out, true, nil
}
