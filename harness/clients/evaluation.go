//go:build unix

package clients

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"
)

// Scenarios are the ten scored workflow scenarios, in execution order: the
// seven of docs/build-safety.md#4, the two one-call scenarios of
// docs/safe-build.md#5 and #6, and concurrent-safe-builds (docs/decisions.md#D18).
var Scenarios = []string{
	"successful-reload",
	"mixed-batch",
	"failed-build-hold",
	"recovery",
	"stale-receipt",
	"unavailable-target",
	"malformed-input",
	"safe-build-progress",
	"safe-build-cancel",
	"concurrent-safe-builds",
}

// Extension is the unscored pause/resume run after the scored scenarios.
const Extension = "pause-resume"

// Row statuses.
const (
	StatusPassed = "passed"
	StatusFailed = "failed"
	StatusNotRun = "not_run"
)

// ErrFalseCompletion means a result claimed a completion (an applied receipt
// or reloadConfirmed:true) that the live application contradicts.
var ErrFalseCompletion = errors.New("false completion")

// Identity is the live JVM's identity as the probe sees it, plus the agent
// session of the baseline DOCTOR.
type Identity struct {
	PID     string `json:"pid"`
	Nonce   string `json:"nonce"`
	Session string `json:"sessionId"`
}

// CompletionCheck is one oracle decision: a claimed reload and what the live
// probe showed.
type CompletionCheck struct {
	ClassName      string   `json:"className"`
	ExpectedSha256 string   `json:"expectedSha256"`
	ExpectedValue  int      `json:"expectedValue"`
	Receipt        any      `json:"receipt,omitempty"`
	Probe          *Probe   `json:"probe,omitempty"`
	Proven         bool     `json:"proven"`
	Problems       []string `json:"problems,omitempty"`
}

// Row is one scenario (or the setup bucket) in evaluation.json.
type Row struct {
	Name             string            `json:"name"`
	Status           string            `json:"status"`
	ElapsedMs        int64             `json:"elapsedMs"`
	ToolCalls        int               `json:"toolCalls"`
	CallsByTool      map[string]int    `json:"callsByTool"`
	Observations     int               `json:"observations"`
	Restarts         int               `json:"restarts"`
	CompletionChecks []CompletionCheck `json:"completionChecks"`
	Error            string            `json:"error,omitempty"`
}

// Summary is evaluation.json's summary.
type Summary struct {
	Planned              int            `json:"planned"`
	Succeeded            int            `json:"succeeded"`
	Failed               int            `json:"failed"`
	NotRun               int            `json:"notRun"`
	SuccessRate          float64        `json:"successRate"`
	CompletedClaims      int            `json:"completedClaims"`
	FalseCompletions     int            `json:"falseCompletions"`
	FalseCompletionRate  *float64       `json:"falseCompletionRate"`
	Restarts             int            `json:"restarts"`
	IdentityObservations int            `json:"identityObservations"`
	ToolCalls            int            `json:"toolCalls"`
	CallsByTool          map[string]int `json:"callsByTool"`
	NegativeWitnesses    int            `json:"negativeWitnesses"`
	ElapsedMs            int64          `json:"elapsedMs"`
}

// Evaluation is evaluation.json: written on every run, pass or fail.
type Evaluation struct {
	SchemaVersion int            `json:"schemaVersion"`
	Kind          string         `json:"kind"`
	Lane          string         `json:"lane"`
	Metadata      map[string]any `json:"metadata"`
	Passed        bool           `json:"passed"`
	Complete      bool           `json:"complete"`
	Summary       Summary        `json:"summary"`
	Setup         Row            `json:"setup"`
	Scenarios     []Row          `json:"scenarios"`
	Extension     Row            `json:"extension"`
	Error         string         `json:"error,omitempty"`
}

// Recorder counts calls, observations, restarts and completion claims per
// scenario and produces the Evaluation. A scenario that fails leaves every
// later one not_run; a failed setup leaves all of them not_run.
type Recorder struct {
	lane     string
	start    time.Time
	rows     map[string]*Row
	order    []string
	current  *Row
	baseline *Identity
	last     *Probe
	witness  int
	failed   bool
	firstErr error
}

// NewRecorder starts a recorder for lane: a setup row, the scored scenarios and
// the extension, all not_run.
func NewRecorder(lane string) *Recorder {
	r := &Recorder{lane: lane, start: time.Now(), rows: map[string]*Row{}}
	for _, n := range append(append([]string{"setup"}, Scenarios...), Extension) {
		r.rows[n] = &Row{Name: n, Status: StatusNotRun, CallsByTool: map[string]int{}, CompletionChecks: []CompletionCheck{}}
		r.order = append(r.order, n)
	}
	return r
}

// Run runs one named step (setup, a scenario or the extension) unless an
// earlier one failed, and records its status and elapsed time. It returns
// the step's error, or nil when the step was skipped.
func (r *Recorder) Run(name string, step func() error) error {
	row, ok := r.rows[name]
	if !ok {
		panic("clients: unknown step " + name)
	}
	if r.failed {
		return nil
	}
	r.current = row
	t0 := time.Now()
	err := step()
	row.ElapsedMs = time.Since(t0).Milliseconds()
	if err == nil {
		for _, c := range row.CompletionChecks {
			if !c.Proven {
				err = fmt.Errorf("%w: %s claimed %s but %v", ErrFalseCompletion, c.ClassName, c.ExpectedSha256, c.Problems)
				break
			}
		}
	}
	if err != nil {
		row.Status, row.Error = StatusFailed, err.Error()
		r.failed = true
		r.firstErr = fmt.Errorf("%s: %w", name, err)
	} else {
		row.Status = StatusPassed
	}
	r.current = nil
	return err
}

// Err is the first failure, prefixed with its step name, or nil.
func (r *Recorder) Err() error { return r.firstErr }

// Call counts one tool call (a poll or a rejected call counts too).
func (r *Recorder) Call(tool string) {
	if r.current == nil {
		return
	}
	r.current.ToolCalls++
	r.current.CallsByTool[tool]++
}

// Witness counts one rejected schema mutation.
func (r *Recorder) Witness() { r.witness++ }

// SetBaseline fixes the identity that every later probe must show.
func (r *Recorder) SetBaseline(id Identity) { r.baseline = &id }

// Observe records one probe. It returns an error when the JVM's identity
// differs from the baseline, when the counter did not rise, or when there is
// no baseline yet. A changed identity counts as exactly one restart, however
// many probes see it.
func (r *Recorder) Observe(p Probe) error {
	if r.current != nil {
		r.current.Observations++
	}
	prev := r.last
	r.last = &p
	if r.baseline == nil {
		return errors.New("probe before the baseline identity was taken")
	}
	changed := p.PID != r.baseline.PID || p.Nonce != r.baseline.Nonce
	if changed {
		if prev == nil || prev.PID != p.PID || prev.Nonce != p.Nonce {
			if r.current != nil {
				r.current.Restarts++
			}
		}
		return fmt.Errorf("the JVM changed: pid %s nonce %s, baseline pid %s nonce %s", p.PID, p.Nonce, r.baseline.PID, r.baseline.Nonce)
	}
	if prev != nil && p.Counter <= prev.Counter && prev.PID == p.PID && prev.Nonce == p.Nonce {
		return fmt.Errorf("the Service counter did not rise (%d after %d): the Service object was replaced", p.Counter, prev.Counter)
	}
	return nil
}

// Receipt is the part of a VERIFY receipt the oracle reads.
type Receipt struct {
	Status         string `json:"status"`
	ClassName      string `json:"className"`
	ExpectedSha256 string `json:"expectedSha256"`
	ObservedSha256 string `json:"observedSha256"`
	SessionID      string `json:"sessionId"`
}

// Claim runs the oracle on one completion claim: receipt says the class with
// hash is live; probe is the application's answer taken after the receipt
// and before was the previous probe. The completion counts only when the
// receipt is applied with the class, both hashes and the baseline session,
// and the probe shows the baseline pid and nonce, a counter above before's,
// and the expected value. It records the check and returns whether it was
// proven.
func (r *Recorder) Claim(className, hash string, value int, receipt Receipt, raw any, before, probe Probe) bool {
	c := CompletionCheck{ClassName: className, ExpectedSha256: hash, ExpectedValue: value, Receipt: raw, Probe: &probe}
	if receipt.Status != "applied" {
		c.Problems = append(c.Problems, "receipt status "+receipt.Status+", not applied")
	}
	if receipt.ClassName != className {
		c.Problems = append(c.Problems, "receipt class "+receipt.ClassName)
	}
	if receipt.ExpectedSha256 != hash || receipt.ObservedSha256 != hash {
		c.Problems = append(c.Problems, fmt.Sprintf("receipt hashes expected=%s observed=%s, want %s", receipt.ExpectedSha256, receipt.ObservedSha256, hash))
	}
	switch {
	case r.baseline == nil:
		c.Problems = append(c.Problems, "no baseline identity")
	default:
		if receipt.SessionID != r.baseline.Session {
			c.Problems = append(c.Problems, "receipt session "+receipt.SessionID+", baseline "+r.baseline.Session)
		}
		if probe.PID != r.baseline.PID || probe.Nonce != r.baseline.Nonce {
			c.Problems = append(c.Problems, "probe identity "+probe.PID+"/"+probe.Nonce+" differs from the baseline")
		}
	}
	if probe.Counter <= before.Counter {
		c.Problems = append(c.Problems, fmt.Sprintf("probe counter %d not above %d", probe.Counter, before.Counter))
	}
	if probe.Value != value {
		c.Problems = append(c.Problems, fmt.Sprintf("probe value %d, want %d", probe.Value, value))
	}
	c.Proven = len(c.Problems) == 0
	if r.current != nil {
		r.current.CompletionChecks = append(r.current.CompletionChecks, c)
	}
	return c.Proven
}

// FalseClaim records a claim that is false on its face (reloadConfirmed:true
// from build, scan, doctor or reload_control) as an unproven completion check.
func (r *Recorder) FalseClaim(tool, detail string) {
	if r.current == nil {
		return
	}
	r.current.CompletionChecks = append(r.current.CompletionChecks, CompletionCheck{ClassName: tool, Problems: []string{detail}})
}

// Evaluation assembles evaluation.json. metadata is copied in as is.
func (r *Recorder) Evaluation(metadata map[string]any) Evaluation {
	ev := Evaluation{SchemaVersion: 1, Kind: "deterministic-workflow", Lane: r.lane, Metadata: metadata}
	s := Summary{Planned: len(Scenarios), CallsByTool: map[string]int{}, NegativeWitnesses: r.witness, ElapsedMs: time.Since(r.start).Milliseconds()}
	for _, n := range r.order {
		row := *r.rows[n]
		s.ToolCalls += row.ToolCalls
		for k, v := range row.CallsByTool {
			s.CallsByTool[k] += v
		}
		s.IdentityObservations += row.Observations
		s.Restarts += row.Restarts
		for _, c := range row.CompletionChecks {
			if c.Receipt != nil || !c.Proven {
				s.CompletedClaims++
			}
			if !c.Proven {
				s.FalseCompletions++
			}
		}
		switch n {
		case "setup":
			ev.Setup = row
		case Extension:
			ev.Extension = row
		default:
			ev.Scenarios = append(ev.Scenarios, row)
			switch row.Status {
			case StatusPassed:
				s.Succeeded++
			case StatusFailed:
				s.Failed++
			default:
				s.NotRun++
			}
		}
	}
	s.SuccessRate = float64(s.Succeeded) / float64(s.Planned)
	if s.CompletedClaims > 0 {
		rate := float64(s.FalseCompletions) / float64(s.CompletedClaims)
		s.FalseCompletionRate = &rate
	}
	ev.Summary = s
	ev.Complete = s.NotRun == 0
	ev.Passed = ev.Setup.Status == StatusPassed && s.Succeeded == s.Planned && ev.Extension.Status == StatusPassed && s.FalseCompletions == 0 && r.firstErr == nil
	if r.firstErr != nil {
		ev.Error = r.firstErr.Error()
	}
	return ev
}

// WriteJSON writes v as indented JSON to path (atomically).
func WriteJSON(path string, v any) error {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return fmt.Errorf("encoding %s: %w", filepath.Base(path), err)
	}
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, append(b, '\n'), 0o644); err != nil {
		return fmt.Errorf("writing %s: %w", filepath.Base(path), err)
	}
	if err := os.Rename(tmp, path); err != nil {
		return fmt.Errorf("writing %s: %w", filepath.Base(path), err)
	}
	return nil
}
