//go:build unix

package clients

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// ErrWitness means a witness run did not fail the way it must.
var ErrWitness = errors.New("witness run did not fail as required")

// WitnessConfig configures RunHoldWitness.
type WitnessConfig struct {
	// WorkDir is a fresh directory. Required.
	WorkDir string
	// Binary and AgentJar are what the lanes install. Required.
	Binary, AgentJar string
	// TSDir is the TypeScript npm project; empty skips the TypeScript lane.
	TSDir string
}

// RunHoldWitness proves that the held check can fail: it runs the
// go-sdk-2025-06-18 lane and the TypeScript lane with the hold removed from
// failed-build-hold and requires each to fail exactly there because the live
// probe showed 3 where 2 was required, with the later scenarios not_run, a
// non-passing evaluation.json and no evidence.json.
func RunHoldWitness(ctx context.Context, cfg WitnessConfig) ([]LaneOutcome, error) {
	var outs []LaneOutcome
	lane := GoSDKLane(GoLane{Version: Version20250618})
	lane.WorkDir, lane.Binary, lane.AgentJar, lane.SkipHold = filepath.Join(cfg.WorkDir, lane.Name), cfg.Binary, cfg.AgentJar, true
	lane.Metadata = map[string]any{"fault": "skip-hold"}
	rep, err := RunLane(ctx, lane)
	out := LaneOutcome{Lane: lane.Name, Passed: err == nil, Evaluation: rep.Evaluation, EvaluationPath: rep.EvaluationPath, EvidencePath: rep.EvidencePath}
	if err != nil {
		out.Error = err.Error()
	}
	outs = append(outs, out)
	if cfg.TSDir != "" {
		outs = append(outs, RunTSLane(ctx, TSConfig{Install: true, Dir: cfg.TSDir, WorkDir: filepath.Join(cfg.WorkDir, TSLaneName), Binary: cfg.Binary, AgentJar: cfg.AgentJar, SkipHold: true}))
	}
	var errs []error
	for _, o := range outs {
		if err := CheckHoldWitness(o); err != nil {
			errs = append(errs, err)
		}
	}
	return outs, errors.Join(errs...)
}

// CheckHoldWitness checks one witness lane's outcome: failed at
// failed-build-hold by a probe showing 3 where 2 was required.
func CheckHoldWitness(o LaneOutcome) error {
	ev := o.Evaluation
	fail := func(format string, a ...any) error {
		return fmt.Errorf("%w: %s: %s", ErrWitness, o.Lane, fmt.Sprintf(format, a...))
	}
	if o.Passed || ev.Passed {
		return fail("the lane passed without the hold")
	}
	if len(ev.Scenarios) != len(Scenarios) {
		return fail("evaluation.json has %d scenario rows", len(ev.Scenarios))
	}
	for i, row := range ev.Scenarios {
		want := StatusPassed
		switch {
		case i == 2:
			want = StatusFailed
		case i > 2:
			want = StatusNotRun
		}
		if row.Status != want {
			return fail("%s is %s, want %s", row.Name, row.Status, want)
		}
	}
	if e := ev.Scenarios[2].Error; !strings.Contains(e, "value 3, want 2") {
		return fail("failed-build-hold failed for another reason: %s", e)
	}
	// Two scenarios passed, failed-build-hold failed, every later one did not run.
	if ev.Summary.Planned != len(Scenarios) || ev.Summary.NotRun != len(Scenarios)-3 || ev.Complete {
		return fail("summary %+v", ev.Summary)
	}
	if _, err := os.Stat(filepath.Join(filepath.Dir(o.EvaluationPath), "evidence.json")); err == nil {
		return fail("evidence.json was written for a failed run")
	}
	return nil
}
