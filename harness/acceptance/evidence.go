package acceptance

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
)

// ScenarioNames are the scenarios every lane runs: the seven of
// docs/build-safety.md#3, in order, then the two one-call scenarios of the
// agent-facing tool (docs/safe-build.md#1) and the queued builds of
// docs/decisions.md#D18.
var ScenarioNames = []string{
	"opt-out",
	"partial-failure",
	"competing-owner",
	"same-owner-recovery",
	"exact-byte-receipts",
	"up-to-date-barrier",
	"offline-before-output",
	"one-call-good-change",
	"one-call-failing-change",
	"queued-builds",
}

// GradleOnlyScenarios follow ScenarioNames in the Gradle lane only: the
// continuous build of docs/decisions.md#D20 (Maven has no continuous mode).
var GradleOnlyScenarios = []string{"continuous"}

// LaneScenarios are the scenarios of lane, in the order they run.
func LaneScenarios(lane Lane) []string {
	names := append([]string(nil), ScenarioNames...)
	if lane == LaneGradle {
		names = append(names, GradleOnlyScenarios...)
	}
	return names
}

// Evidence is the outcome of a Run: one entry per lane that passed.
type Evidence struct {
	// WorkDir holds every project, log and evidence file of the run.
	WorkDir string
	// Lanes are the lanes that passed, in run order.
	Lanes []*LaneEvidence
}

// ScenarioResult is one passed scenario and its wall time.
type ScenarioResult struct {
	Name   string `json:"name"`
	WallMs int64  `json:"wallMs"`
}

// Artifact is one file the proof used, by content hash.
type Artifact struct {
	Name   string `json:"name"`
	Path   string `json:"path"`
	SHA256 string `json:"sha256"`
}

// OSInfo identifies the machine.
type OSInfo struct {
	Uname      string `json:"uname"`
	PrettyName string `json:"prettyName"`
}

// OneCallResult is what a one-call scenario recorded in evidence.json: the
// tool's whole result and the progress notifications that came before it.
type OneCallResult struct {
	Scenario string          `json:"scenario"`
	Result   json.RawMessage `json:"result"`
	Progress int             `json:"progressNotifications"`
}

// QueueEvidence is what the queued-builds scenario recorded in
// evidence.json: each caller's outcome and the builds that ran, in order.
type QueueEvidence struct {
	Callers []QueueCaller `json:"callers"`
	Runs    []QueueRun    `json:"runs"`
}

// QueueCaller is one of the three callers and its result.
type QueueCaller struct {
	Caller     string `json:"caller"`
	Outcome    string `json:"outcome"`
	DurationMs int64  `json:"durationMs"`
	Detail     string `json:"detail"`
}

// QueueRun is one run of the build: when it started and ended (unix ns).
type QueueRun struct {
	StartNs int64 `json:"startNs"`
	EndNs   int64 `json:"endNs"`
}

// ContinuousEvidence is what the continuous scenario recorded in
// evidence.json: each cycle's stderr line, parsed, and how the run ended.
type ContinuousEvidence struct {
	Cycles   []ContinuousCycle `json:"cycles"`
	ExitCode int               `json:"exitCode"`
	EndLine  string            `json:"endLine"`
}

// ContinuousCycle is one cycle of the run (docs/decisions.md#D20).
type ContinuousCycle struct {
	Number   int    `json:"number"`
	Outcome  string `json:"outcome"` // ok, failed, refused or stopped
	Released bool   `json:"released"`
	Line     string `json:"line"`
}

// LaneEvidence is the content of a lane's evidence.json: Reclazz's fields
// (tool, passed, pid, sessionId, scenarios, receipts) plus the versions and
// artifact hashes Reclazz's evidence lacks.
type LaneEvidence struct {
	Tool              string              `json:"tool"`
	Passed            bool                `json:"passed"`
	PID               int                 `json:"pid"`
	SessionID         string              `json:"sessionId"`
	Scenarios         []ScenarioResult    `json:"scenarios"`
	Receipts          []json.RawMessage   `json:"receipts"`
	OneCall           []OneCallResult     `json:"oneCall"`
	Queue             *QueueEvidence      `json:"queue"`
	Continuous        *ContinuousEvidence `json:"continuous,omitempty"`
	ToolVersion       string              `json:"toolVersion"`
	JDK               string              `json:"jdk"`
	OS                OSInfo              `json:"os"`
	BuildguardVersion string              `json:"buildguardVersion"`
	Artifacts         []Artifact          `json:"artifacts"`
	WallMs            int64               `json:"wallMs"`
	ProjectDir        string              `json:"projectDir"`
}

// ErrIncomplete: evidence was about to be written for a lane that did not
// pass all seven scenarios.
var ErrIncomplete = errors.New("evidence is written only when all of the lane's scenarios passed")

// complete checks that e records a pass of all of its lane's scenarios in
// order, both receipts, and the Gradle lane's continuous cycles.
func (e *LaneEvidence) complete() error {
	if !e.Passed {
		return fmt.Errorf("%w: the lane did not pass", ErrIncomplete)
	}
	names := LaneScenarios(Lane(e.Tool))
	if len(e.Scenarios) != len(names) {
		return fmt.Errorf("%w: %d of %d scenarios recorded", ErrIncomplete, len(e.Scenarios), len(names))
	}
	for i, s := range e.Scenarios {
		if s.Name != names[i] {
			return fmt.Errorf("%w: scenario %d is %q, want %q", ErrIncomplete, i+1, s.Name, names[i])
		}
	}
	if (e.Continuous != nil) != (Lane(e.Tool) == LaneGradle) || (e.Continuous != nil && len(e.Continuous.Cycles) == 0) {
		return fmt.Errorf("%w: continuous cycles recorded %v for the %s lane (Gradle only)", ErrIncomplete, e.Continuous != nil, e.Tool)
	}
	if len(e.Receipts) != 2 {
		return fmt.Errorf("%w: %d receipts, want 2", ErrIncomplete, len(e.Receipts))
	}
	if len(e.OneCall) != 2 {
		return fmt.Errorf("%w: %d one-call results, want 2", ErrIncomplete, len(e.OneCall))
	}
	if e.SessionID == "" || e.PID == 0 {
		return fmt.Errorf("%w: no session or pid", ErrIncomplete)
	}
	return nil
}

// PassSummary is what a lane's PASS line says its scenarios were.
func PassSummary(lane Lane) string {
	if lane == LaneGradle {
		return "the 7 of docs/build-safety.md#3, 2 one-call, 1 queued, 1 continuous"
	}
	return "the 7 of docs/build-safety.md#3, 2 one-call, 1 queued; no continuous scenario: Maven has no continuous mode (docs/decisions.md#D20)"
}

// writeEvidence writes e as <dir>/evidence.json, only when e is complete.
func writeEvidence(dir string, e *LaneEvidence) (string, error) {
	if err := e.complete(); err != nil {
		return "", err
	}
	b, err := json.MarshalIndent(e, "", "  ")
	if err != nil {
		return "", fmt.Errorf("encoding evidence: %w", err)
	}
	path := filepath.Join(dir, "evidence.json")
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, append(b, '\n'), 0o644); err != nil {
		return "", fmt.Errorf("writing evidence: %w", err)
	}
	if err := os.Rename(tmp, path); err != nil {
		os.Remove(tmp)
		return "", fmt.Errorf("writing evidence: %w", err)
	}
	return path, nil
}
