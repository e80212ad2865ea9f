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
	for _, v := range GoSDKVersions {
		n = append(n, GoSDKLaneName(v))
	}
	return append(n, TSLaneName)
}

// RunMatrix runs the selected lanes one after another (one JVM each) and
// prints `PASS <lane>: 7 scenarios …` or `FAIL <lane>: …` per lane. It
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
		if name == TSLaneName && cfg.TSDir == "" {
			continue
		}
		if err := ctx.Err(); err != nil {
			return res, fmt.Errorf("matrix interrupted before lane %s: %w", name, err)
		}
		fmt.Fprintf(log, "clients: lane %s\n", name)
		t0 := time.Now()
		var out LaneOutcome
		if name == TSLaneName {
			out = RunTSLane(ctx, TSConfig{Install: true, Dir: cfg.TSDir, WorkDir: filepath.Join(cfg.WorkDir, name), Binary: cfg.Binary, AgentJar: cfg.AgentJar, Log: log})
		} else {
			out = runGoLane(ctx, cfg, name, res.Host)
		}
		out.Elapsed = time.Since(t0)
		res.Lanes = append(res.Lanes, out)
		if out.Passed {
			s := out.Evaluation.Summary
			fmt.Fprintf(log, "PASS %s: 7 scenarios, %s, %d tool calls, %d negative witnesses, 0 false completions, %.1fs\n",
				name, out.Evaluation.Metadata["protocolVersion"], s.ToolCalls, s.NegativeWitnesses, out.Elapsed.Seconds())
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
	for _, v := range GoSDKVersions {
		if GoSDKLaneName(v) == name {
			lane = GoSDKLane(v)
			lane.Metadata = map[string]any{"client": "go-sdk CommandTransport", "sdk": GoSDKModule + " " + GoSDKVersion(), "requestedVersion": v}
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
