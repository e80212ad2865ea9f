//go:build unix

package clients

import (
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestParseProbe(t *testing.T) {
	t.Parallel()
	p, ok := parseProbe("PROBE 12 abc 3 4")
	if !ok || p != (Probe{PID: "12", Nonce: "abc", Counter: 3, Value: 4}) {
		t.Errorf("got %+v %v", p, ok)
	}
	for _, bad := range []string{"PROBE 12 abc 3", "PROBE 12 abc x 4", "READY 12 abc", "PROBE 12 abc 3 4 5"} {
		if _, ok := parseProbe(bad); ok {
			t.Errorf("%q parsed", bad)
		}
	}
}

func TestSameJSON(t *testing.T) {
	t.Parallel()
	same, err := SameJSON([]byte(`{"a":1,"b":[true,"x"]}`), []byte(`{"b":[true,"x"],"a":1.0}`))
	if err != nil || !same {
		t.Errorf("same %v err %v", same, err)
	}
	for _, other := range []string{`{"a":2,"b":[true,"x"]}`, `{"a":1,"b":[true]}`, `{"a":1,"b":[true,"x"],"c":null}`} {
		if same, _ := SameJSON([]byte(`{"a":1,"b":[true,"x"]}`), []byte(other)); same {
			t.Errorf("%s compared equal", other)
		}
	}
}

func scanTool(schema string) ToolInfo {
	return ToolInfo{Name: "reclazz_scan", OutputSchema: json.RawMessage(schema)}
}

const scanSchema = `{"$schema":"https://json-schema.org/draft/2020-12/schema","type":"object",
 "properties":{"status":{"enum":["sent","unavailable"]},"detail":{"type":"string"},"reloadConfirmed":{"type":"boolean","const":false}},
 "required":["status","detail","reloadConfirmed"]}`

func TestSchemasValidateAndWitness(t *testing.T) {
	t.Parallel()
	s, err := CompileSchemas([]ToolInfo{scanTool(scanSchema)})
	if err != nil {
		t.Fatal(err)
	}
	n, err := s.Validate("reclazz_scan", json.RawMessage(`{"status":"sent","detail":"d","reloadConfirmed":false}`))
	if err != nil || n != 1 {
		t.Fatalf("valid result: %d %v", n, err)
	}
	for _, bad := range []string{`{"status":"made_up","detail":"d","reloadConfirmed":false}`, `{"status":"sent","detail":"d","reloadConfirmed":true}`, `{"status":"sent","reloadConfirmed":false}`} {
		if _, err := s.Validate("reclazz_scan", json.RawMessage(bad)); !errors.Is(err, ErrSchema) {
			t.Errorf("%s: err %v, want ErrSchema", bad, err)
		}
	}
}

func TestSchemaThatCannotFailHasNoWitness(t *testing.T) {
	t.Parallel()
	// The witness deletes a field the schema does not really require, so the
	// mutated copy still validates: that must be reported, not counted.
	loose := `{"type":"object","properties":{"status":{"type":"string"}},"required":["status"]}`
	s, err := CompileSchemas([]ToolInfo{scanTool(loose)})
	if err != nil {
		t.Fatal(err)
	}
	s.required["reclazz_scan"] = []string{"notThere"}
	if _, err := s.Validate("reclazz_scan", json.RawMessage(`{"status":"sent"}`)); !errors.Is(err, ErrNoWitness) {
		t.Errorf("err %v, want ErrNoWitness", err)
	}
}

func TestCompileSchemasRefusesMissingSchema(t *testing.T) {
	t.Parallel()
	if _, err := CompileSchemas([]ToolInfo{{Name: "reclazz_scan"}}); !errors.Is(err, ErrShape) {
		t.Errorf("err %v, want ErrShape", err)
	}
}

func TestCheckLegacyText(t *testing.T) {
	t.Parallel()
	ok := []struct {
		tool    string
		isError bool
		text    string
	}{
		{"reclazz_build", false, "Acknowledged BUILD started. This is not reload completion."},
		{"reclazz_build", true, "Build signal not confirmed: BUILD ok was not acknowledged"},
		{"reclazz_scan", false, legacyScanSent},
		{"reclazz_scan", true, "Scan request failed: no port file"},
		{"reclazz_pending", false, "Nothing from this session needs a restart."},
		{"reclazz_diagnose", true, "Diagnosis query failed: x"},
	}
	for _, c := range ok {
		if err := checkLegacyText(c.tool, map[string]any{"state": "started"}, c.isError, c.text); err != nil {
			t.Errorf("%s %q: %v", c.tool, c.text, err)
		}
	}
	bad := []struct {
		tool    string
		isError bool
		text    string
	}{
		{"reclazz_build", false, "Acknowledged BUILD ok. This is not reload completion."},
		{"reclazz_build", false, `{"status":"acknowledged"}`},
		{"reclazz_scan", false, "Sent SCAN."},
		{"reclazz_pending", false, "Pending query failed: x"},
		{"reclazz_diagnose", true, "Pending query failed: x"},
		{"reclazz_status", false, "{}"},
	}
	for _, c := range bad {
		if err := checkLegacyText(c.tool, map[string]any{"state": "started"}, c.isError, c.text); !errors.Is(err, ErrShape) {
			t.Errorf("%s %q: err %v, want ErrShape", c.tool, c.text, err)
		}
	}
}

// witnessOutcome is a lane outcome that failed failed-build-hold as the
// witness requires.
func witnessOutcome(t *testing.T) LaneOutcome {
	rows := make([]Row, len(Scenarios))
	for i, n := range Scenarios {
		rows[i] = Row{Name: n, Status: StatusPassed}
		if i == 2 {
			rows[i].Status, rows[i].Error = StatusFailed, "held check: probe shows value 3, want 2"
		}
		if i > 2 {
			rows[i].Status = StatusNotRun
		}
	}
	dir := t.TempDir()
	return LaneOutcome{Lane: "w", EvaluationPath: filepath.Join(dir, "evaluation.json"), Evaluation: Evaluation{Scenarios: rows, Summary: Summary{Planned: len(Scenarios), Succeeded: 2, Failed: 1, NotRun: len(Scenarios) - 3}}}
}

func TestCheckHoldWitness(t *testing.T) {
	t.Parallel()
	if err := CheckHoldWitness(witnessOutcome(t)); err != nil {
		t.Fatalf("a proper witness was refused: %v", err)
	}
	faults := map[string]func(*LaneOutcome){
		"passed":         func(o *LaneOutcome) { o.Passed = true },
		"other reason":   func(o *LaneOutcome) { o.Evaluation.Scenarios[2].Error = "call #9 reclazz_build: isError" },
		"failed earlier": func(o *LaneOutcome) { o.Evaluation.Scenarios[1].Status = StatusFailed },
		"later ran":      func(o *LaneOutcome) { o.Evaluation.Scenarios[3].Status = StatusPassed },
		"evidence exists": func(o *LaneOutcome) {
			os.WriteFile(filepath.Join(filepath.Dir(o.EvaluationPath), "evidence.json"), []byte("{}"), 0o644)
		},
	}
	for name, f := range faults {
		o := witnessOutcome(t)
		f(&o)
		if err := CheckHoldWitness(o); !errors.Is(err, ErrWitness) {
			t.Errorf("%s: err %v, want ErrWitness", name, err)
		}
	}
}

func TestMatrixDocClaimsOnlyWhatRan(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "docs", "client-matrix.md")
	res := MatrixResult{Host: map[string]any{}, Lanes: []LaneOutcome{
		{Lane: "go-sdk-2025-06-18", Passed: true, Evaluation: Evaluation{Metadata: map[string]any{"protocolVersion": "2025-06-18"}, Summary: Summary{Planned: 7, Succeeded: 7}}},
		{Lane: "ts-sdk", Error: "lane ts-sdk: recovery: call #14 reclazz_verify: isError", Evaluation: Evaluation{Summary: Summary{Planned: 7, Succeeded: 3}}},
	}}
	if err := WriteMatrixDoc(path, res); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	doc := string(b)
	for _, want := range []string{"| go-sdk-2025-06-18 |", "**PASS**", "| ts-sdk |", "**FAIL**: lane ts-sdk: recovery: call #14 reclazz_verify", "| Windows (any client) | Not run", "| macOS (any client) | Not run", "Claude Desktop, Cursor"} {
		if !strings.Contains(doc, want) {
			t.Errorf("doc lacks %q", want)
		}
	}
	if strings.Count(doc, "**PASS**") != 1 {
		t.Errorf("doc claims %d passes, want 1", strings.Count(doc, "**PASS**"))
	}
	for _, lane := range []string{"go-sdk-2024-11-05", "go-sdk-default"} {
		if strings.Contains(doc, lane) {
			t.Errorf("doc names %s, which did not run", lane)
		}
	}
}

func TestLoadMatrixNeedsEvidenceForAPass(t *testing.T) {
	t.Parallel()
	work := filepath.Join(t.TempDir(), "clients-20261130T120000Z")
	write := func(lane string, ev Evaluation, evidence bool) {
		dir := filepath.Join(work, lane)
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := WriteJSON(filepath.Join(dir, "evaluation.json"), ev); err != nil {
			t.Fatal(err)
		}
		if evidence {
			if err := WriteJSON(filepath.Join(dir, "evidence.json"), map[string]any{"passed": true}); err != nil {
				t.Fatal(err)
			}
		}
	}
	write("go-sdk-2025-06-18", Evaluation{Passed: true, Metadata: map[string]any{"os": "TestOS"}}, true)
	write("go-sdk-2025-11-25", Evaluation{Passed: true}, false)
	write("ts-sdk", Evaluation{Passed: false, Error: "recovery: call #3 reclazz_verify: isError"}, false)
	res, err := LoadMatrix(work)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]bool{}
	for _, l := range res.Lanes {
		got[l.Lane] = l.Passed
	}
	want := map[string]bool{"go-sdk-2025-06-18": true, "go-sdk-2025-11-25": false, "ts-sdk": false}
	if len(got) != len(want) {
		t.Fatalf("lanes %v, want %v", got, want)
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s passed = %v, want %v", k, got[k], v)
		}
	}
	if res.Host["os"] != "TestOS" || res.Started.Hour() != 12 || res.WitnessRun {
		t.Errorf("host %v started %v witness %v", res.Host, res.Started, res.WitnessRun)
	}
}

// TestTurnBuildCatchesOverlap: the turn build run while another turn build
// runs fails with "overlap", and builds.log with interleaved runs is
// refused, so concurrent-safe-builds fails if the queue let two builds run
// at once.
func TestTurnBuildCatchesOverlap(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	turn := func(args ...string) *exec.Cmd {
		c := exec.Command("sh", append([]string{"-c", turnScript}, args...)...)
		c.Dir = dir
		return c
	}
	first := turn("sh", "-c", "until [ -e go ]; do sleep 0.01; done")
	if err := first.Start(); err != nil {
		t.Fatal(err)
	}
	defer first.Process.Kill()
	deadline := time.Now().Add(10 * time.Second)
	for {
		if _, err := os.Stat(filepath.Join(dir, "build.running")); err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the first turn build never started")
		}
		time.Sleep(10 * time.Millisecond)
	}
	out, err := turn("true").CombinedOutput()
	if err == nil || !strings.Contains(string(out), "overlap") {
		t.Errorf("a turn build during another: %v %q, want a failure naming the overlap", err, out)
	}
	os.WriteFile(filepath.Join(dir, "go"), nil, 0o644)
	if err := first.Wait(); err != nil {
		t.Fatal(err)
	}
	if out, err := turn("true").CombinedOutput(); err != nil {
		t.Fatalf("a turn build after the first: %v %q", err, out)
	}
	runs, err := readTurnRuns(filepath.Join(dir, BuildsLogName))
	if err != nil || len(runs) != 2 || runs[0] == runs[1] {
		t.Errorf("two runs one after the other: %v %v", runs, err)
	}
	for _, bad := range []string{"start 1\nstart 2\nend 1\nend 2\n", "start 1\nend 2\n", "start 1\n", "end 1\nstart 1\n"} {
		p := filepath.Join(dir, "bad.log")
		os.WriteFile(p, []byte(bad), 0o644)
		if runs, err := readTurnRuns(p); err == nil {
			t.Errorf("readTurnRuns(%q) = %v, want an error", bad, runs)
		}
	}
}
