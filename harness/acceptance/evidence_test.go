package acceptance

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func passedLane() *LaneEvidence {
	e := &LaneEvidence{
		Tool: "gradle", Passed: true, PID: 42, SessionID: "0b6f0000-0000-4000-8000-000000000000",
		Receipts: []json.RawMessage{json.RawMessage(`{"status":"applied"}`), json.RawMessage(`{"status":"applied"}`)},
		OneCall: []OneCallResult{
			{Scenario: "one-call-good-change", Result: json.RawMessage(`{"outcome":"ok"}`), Progress: 3},
			{Scenario: "one-call-failing-change", Result: json.RawMessage(`{"outcome":"failed"}`), Progress: 2},
		},
	}
	for _, n := range LaneScenarios(LaneGradle) {
		e.Scenarios = append(e.Scenarios, ScenarioResult{Name: n, WallMs: 1})
	}
	e.Continuous = &ContinuousEvidence{Cycles: []ContinuousCycle{{Number: 1, Outcome: "ok", Released: true}}, ExitCode: 130}
	return e
}

// passedMavenLane is a passed Maven lane: no continuous scenario.
func passedMavenLane() *LaneEvidence {
	e := passedLane()
	e.Tool, e.Continuous = "maven", nil
	e.Scenarios = e.Scenarios[:len(ScenarioNames)]
	return e
}

func TestWriteEvidenceOnlyOnPass(t *testing.T) {
	t.Parallel()
	cases := map[string]func(*LaneEvidence){
		"not passed":                         func(e *LaneEvidence) { e.Passed = false },
		"six scenarios":                      func(e *LaneEvidence) { e.Scenarios = e.Scenarios[:6] },
		"wrong order":                        func(e *LaneEvidence) { e.Scenarios[0], e.Scenarios[1] = e.Scenarios[1], e.Scenarios[0] },
		"one receipt":                        func(e *LaneEvidence) { e.Receipts = e.Receipts[:1] },
		"one one-call":                       func(e *LaneEvidence) { e.OneCall = e.OneCall[:1] },
		"no session":                         func(e *LaneEvidence) { e.SessionID = "" },
		"gradle without continuous scenario": func(e *LaneEvidence) { e.Scenarios = e.Scenarios[:len(ScenarioNames)] },
		"gradle without continuous cycles":   func(e *LaneEvidence) { e.Continuous = nil },
		"gradle with no cycle":               func(e *LaneEvidence) { e.Continuous.Cycles = nil },
		"maven with continuous":              func(e *LaneEvidence) { *e = *passedMavenLane(); e.Scenarios = passedLane().Scenarios },
		"maven with continuous cycles":       func(e *LaneEvidence) { *e = *passedMavenLane(); e.Continuous = passedLane().Continuous },
	}
	for name, spoil := range cases {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			e := passedLane()
			spoil(e)
			if _, err := writeEvidence(dir, e); !errors.Is(err, ErrIncomplete) {
				t.Fatalf("err = %v, want ErrIncomplete", err)
			}
			if _, err := os.Stat(filepath.Join(dir, "evidence.json")); !errors.Is(err, os.ErrNotExist) {
				t.Fatalf("evidence.json exists after a failed lane (stat err %v)", err)
			}
		})
	}
}

func TestWriteEvidenceFields(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	path, err := writeEvidence(dir, passedLane())
	if err != nil {
		t.Fatal(err)
	}
	var got map[string]any
	if err := json.Unmarshal([]byte(readFile(t, path)), &got); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"tool", "passed", "pid", "sessionId", "scenarios", "receipts", "oneCall", "toolVersion", "jdk", "os", "buildguardVersion", "artifacts"} {
		if _, ok := got[k]; !ok {
			t.Errorf("evidence.json lacks %q", k)
		}
	}
	sc := got["scenarios"].([]any)
	if first := sc[0].(map[string]any); first["name"] != "opt-out" {
		t.Errorf("first scenario = %v", first)
	}
}

// TestLaneScenariosPerTool: the Gradle lane runs the continuous scenario
// last, the Maven lane never (docs/decisions.md#D20), and each PASS line
// says so.
func TestLaneScenariosPerTool(t *testing.T) {
	t.Parallel()
	g, m := LaneScenarios(LaneGradle), LaneScenarios(LaneMaven)
	if len(g) != 11 || g[10] != "continuous" || len(m) != 10 {
		t.Errorf("gradle %v, maven %v", g, m)
	}
	for _, n := range m {
		if n == "continuous" {
			t.Errorf("the Maven lane lists the continuous scenario")
		}
	}
	if s := PassSummary(LaneGradle); !strings.HasSuffix(s, "1 queued, 1 continuous") {
		t.Errorf("gradle PASS summary %q", s)
	}
	if s := PassSummary(LaneMaven); !strings.Contains(s, "no continuous scenario: Maven has no continuous mode") {
		t.Errorf("maven PASS summary %q", s)
	}
	if _, err := writeEvidence(t.TempDir(), passedMavenLane()); err != nil {
		t.Errorf("a passed Maven lane without the continuous scenario: %v", err)
	}
}
