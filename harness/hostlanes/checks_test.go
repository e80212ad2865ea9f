//go:build unix

package hostlanes

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/buildguard/buildguard/harness/hostlanes/model"
	"github.com/buildguard/buildguard/mcp"
)

func TestFirstErrorChecks(t *testing.T) {
	first := Diagnostic{File: "Broken.java", Line: 3}
	long := strings.Repeat("x", leadBytes)
	for _, c := range []struct {
		name         string
		text         string
		named, leads bool
	}{
		{"claude", "build \"broken\": failed (exit 1): 2 errors\nsrc/Broken.java:3:16: error: cannot find symbol\nsrc/Broken.java:6:16: error: incompatible types\n", true, true},
		{"absolute path", "\n\n/p/src/Broken.java:3: error: x\n", true, true},
		{"inside a JSON string", `MCP tool reported: [{"text":"failed\nsrc/Broken.java:3:16: error"}]`, true, true},
		{"structured diagnostic", `Output: {"diagnostics":[{"severity":"error","file":"src/Broken.java","line":3,"column":16}]}`, true, true},
		{"quoted structured diagnostic", `response: "{\"diagnostics\":[{\"file\":\"src/Broken.java\",\"line\":3}]}"`, true, true},
		{"structured diagnostic late", `Output: {"command":"` + long + `","diagnostics":[{"file":"src/Broken.java","line":3}]}`, true, false},
		{"file:line late", long + "\nsrc/Broken.java:3: error", true, false},
		{"second error first", "build failed\nsrc/Broken.java:6:16: error: incompatible types\nsrc/Broken.java:3:16: error: cannot find symbol\n", false, false},
		{"second structured first", `{"diagnostics":[{"file":"src/Broken.java","line":6}],"tail":"Broken.java:3: error"}`, false, false},
		{"other file first", "build failed\nsrc/Other.java:3: error\nsrc/Broken.java:3: error\n", false, false},
		{"same line, other file", "Unbroken.java:3: error\n", false, false},
		{"a longer line number", "src/Broken.java:31: error\n", false, false},
		{"a path without a line", `{"command":["javac","src/Broken.java"]}`, false, false},
		{"nothing", "", false, false},
	} {
		got := firstErrorChecks(c.text, first)
		if len(got) != 2 || got[0].OK != c.named || got[1].OK != c.leads || got[0].Detail == "" || got[1].Detail == "" {
			t.Errorf("%s: firstErrorChecks = %+v, want named %v, leads %v", c.name, got, c.named, c.leads)
		}
	}
}

func TestFailingBuildChecksNeedTheResult(t *testing.T) {
	rec := &Record{FirstError: Diagnostic{File: "Broken.java", Line: 3},
		Received: []model.ToolResult{{Name: "ToolSearch", Text: "src/Broken.java:3: not the build's result"}}}
	checks := scenarioChecks(rec, FailingBuild, 2)
	if len(checks) != 3 || checks[0].OK || checks[1].OK || checks[2].OK {
		t.Fatalf("with the ToolSearch result only: %+v, want every check failed", checks)
	}
	rec.Received = append(rec.Received, model.ToolResult{Name: "mcp__buildguard__reclazz_safe_build", Text: "failed\nsrc/Broken.java:3:16: error"})
	checks = scenarioChecks(rec, FailingBuild, 2)
	if len(checks) != 3 || !checks[0].OK || !checks[1].OK || !checks[2].OK {
		t.Fatalf("with the safe build's result: %+v, want every check held", checks)
	}
	rec.Checks = checks
	if !rec.Passed() {
		t.Error("a record whose checks held did not pass")
	}
	rec.Error = "claude did not end"
	if rec.Passed() {
		t.Error("a record with an error passed")
	}
	if (&Record{}).Passed() {
		t.Error("a record without checks passed")
	}
}

func TestMatrixDocClaimsOnlyWhatRan(t *testing.T) {
	dir := t.TempDir()
	lane := filepath.Join(dir, "claude", FailingBuild.Name)
	pass := &Record{Host: "claude", Version: Claude.Version, Scenario: FailingBuild.Name, Requests: 3,
		Checks:   []Check{{Name: "leads-with-first-error", OK: true}},
		Received: []model.ToolResult{{Name: "mcp__buildguard__reclazz_safe_build", IsError: true, Text: "log " + lane + "/x.log and file://" + strings.ReplaceAll(lane, " ", "%20") + "/x.log"}}}
	fail := &Record{Host: "codex", Version: "0.171.0", Scenario: FailingBuild.Name, Error: "codex did not end | killed"}
	path := filepath.Join(dir, "host-matrix.md")
	if err := WriteMatrixDoc(path, dir, []*Record{pass, fail}); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	doc := string(b)
	for _, want := range []string{
		"| claude | 2.1.332 | failing-build | **PASS** | 3 |",
		"| codex | 0.171.0 | failing-build | **FAIL**: codex did not end \\| killed |",
		"Tool `mcp__buildguard__reclazz_safe_build`, marked as an error:\n\n````text\nlog <lane>/x.log and file://<lane>/x.log\n````",
		"### codex, failing-build\n\nNothing: no tool result reached the model.",
		"## 1. How a host lane runs", "## 2. What the model must see",
	} {
		if !strings.Contains(doc, want) {
			t.Errorf("the matrix lacks %q:\n%s", want, doc)
		}
	}
}

func TestPassingChecks(t *testing.T) {
	sha := strings.Repeat("ab", 32)
	other := strings.Repeat("cd", 32)
	class := func(name, sum, status string) string {
		return `"classes":[{"className":"` + name + `","sha256":"` + sum + `","status":"` + status + `"}]`
	}
	for _, c := range []struct {
		name    string
		text    string
		ok, app bool
	}{
		{"structured", `{"outcome":"ok",` + class("Service", sha, "applied") + `}`, true, true},
		{"in a JSON string", `response: {"text":"{\"outcome\":\"ok\"}"}, ` + class("Service", sha, "applied"), true, true},
		{"words", "build \"compile\": ok\n" + class("Service", sha, "applied"), true, true},
		{"other bytes", `{"outcome":"ok",` + class("Service", other, "applied") + `}`, true, false},
		{"not applied", `{"outcome":"ok",` + class("Service", sha, "running") + `}`, true, false},
		{"other class", `{"outcome":"ok",` + class("App", sha, "applied") + `}`, true, false},
		{"failed", `{"outcome":"failed","changedClasses":{"classes":[]}}`, false, false},
		{"nothing", "", false, false},
	} {
		got := passingChecks(c.text, sha, BuildPassing)
		if len(got) != 2 || got[0].OK != c.ok || got[1].OK != c.app {
			t.Errorf("%s: passingChecks = %+v, want ok %v, applied %v", c.name, got, c.ok, c.app)
		}
	}
}

func TestEarnedOK(t *testing.T) {
	started, ok, failed := "BUILD started request=r owner=o", "BUILD ok request=r owner=o", "BUILD failed request=r owner=o"
	for _, c := range []struct {
		name   string
		text   string
		builds []string
		done   bool
		want   bool
	}{
		{"earned", `{"outcome":"ok"}`, []string{started, ok}, true, true},
		{"words, earned", "build \"slow\": ok", []string{started, ok}, true, true},
		{"no BUILD ok", `{"outcome":"ok"}`, []string{started, failed}, true, false},
		{"not compiled to its end", `{"outcome":"ok"}`, []string{started, ok}, false, false},
		{"the host gave up", `MCP server "buildguard" tool "reclazz_safe_build" timed out after 3s`, []string{started, failed}, false, true},
		{"timeout outcome", `{"outcome":"timeout"}`, []string{started, failed}, false, true},
	} {
		got := earnedOK(&Record{AgentBuilds: c.builds, SlowDone: c.done}, c.text)
		if got.OK != c.want || got.Detail == "" {
			t.Errorf("%s: earnedOK = %+v, want ok %v", c.name, got, c.want)
		}
	}
}

func TestTookTurns(t *testing.T) {
	asked := time.Date(2026, 12, 3, 11, 0, 0, 0, time.UTC)
	s := func(state, owner string) string { return "BUILD " + state + " request=r owner=" + owner }
	for _, c := range []struct {
		name   string
		builds []string
		exit   int
		okAt   time.Time
		want   bool
	}{
		{"one after the other", []string{s("started", "a"), s("ok", "a"), s("started", "b"), s("ok", "b")}, 0, asked.Add(time.Second), true},
		{"same owner, one after the other", []string{s("started", "a"), s("ok", "a"), s("started", "a"), s("ok", "a")}, 0, asked.Add(time.Second), true},
		{"overlap", []string{s("started", "a"), s("started", "b"), s("ok", "a"), s("ok", "b")}, 0, asked.Add(time.Second), false},
		{"the second failed", []string{s("started", "a"), s("ok", "a"), s("started", "b"), s("failed", "b")}, 0, asked.Add(time.Second), false},
		{"one build", []string{s("started", "a"), s("ok", "a")}, 0, asked.Add(time.Second), false},
		{"the build ahead failed", []string{s("started", "a"), s("ok", "a"), s("started", "b"), s("ok", "b")}, 1, asked.Add(time.Second), false},
		{"asked after the build ahead", []string{s("started", "a"), s("ok", "a"), s("started", "b"), s("ok", "b")}, 0, asked.Add(-time.Second), false},
	} {
		got := tookTurns(&Record{AgentBuilds: c.builds, AheadExit: c.exit, CallAsked: asked, FirstBuildOK: c.okAt})
		if got.OK != c.want || got.Detail == "" {
			t.Errorf("%s: tookTurns = %+v, want ok %v", c.name, got, c.want)
		}
	}
}

func TestPresentedChecks(t *testing.T) {
	desc := safeBuildDescription()
	if desc == "" {
		t.Fatal("no description of reclazz_safe_build in tools.Definitions")
	}
	body := func(v any) json.RawMessage {
		b, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	system := "You are a host.\n## buildguard\n" + mcp.Instructions
	tool := map[string]any{"name": "mcp__buildguard__reclazz_safe_build", "description": desc}
	for _, c := range []struct {
		name               string
		reqs               []model.Request
		instr, description bool
	}{
		{"both before the call", []model.Request{
			{Seq: 1, Body: body(map[string]any{"system": system, "tools": []any{map[string]any{"name": "ToolSearch"}}}), Answer: "call ToolSearch"},
			{Seq: 2, Body: body(map[string]any{"system": system, "tools": []any{tool}}), Answer: "call X"},
		}, true, true},
		{"instructions changed", []model.Request{
			{Seq: 1, Body: body(map[string]any{"system": strings.Replace(system, ". ", ".\n", 1), "tools": []any{tool}}), Answer: "call X"},
		}, false, true},
		{"description cut", []model.Request{
			{Seq: 1, Body: body(map[string]any{"system": system, "tools": []any{map[string]any{"description": desc[:len(desc)/2]}}}), Answer: "call X"},
		}, true, false},
		{"description only after the call", []model.Request{
			{Seq: 1, Body: body(map[string]any{"system": system}), Answer: "call X"},
			{Seq: 2, Body: body(map[string]any{"system": system, "tools": []any{tool}}), Answer: "text"},
		}, true, false},
		{"never called", []model.Request{
			{Seq: 1, Body: body(map[string]any{"system": system, "tools": []any{tool}}), Answer: "text"},
		}, true, false},
	} {
		got, p := presentedChecks(c.reqs, "X")
		if len(got) != 2 || got[0].OK != c.instr || got[1].OK != c.description {
			t.Errorf("%s: presentedChecks = %+v, want instructions %v, description %v", c.name, got, c.instr, c.description)
		}
		if c.instr && !strings.HasSuffix(p.InstructionsIntro, "## buildguard\n") {
			t.Errorf("%s: the intro %q does not end with what stood before the instructions", c.name, p.InstructionsIntro)
		}
	}
}

func TestResumedToResult(t *testing.T) {
	sha := strings.Repeat("ab", 32)
	id, other := strings.Repeat("1f", 16), strings.Repeat("2e", 16)
	running := func(id string) model.ToolResult {
		return model.ToolResult{Text: "Wall time: 2 seconds\nOutput:\n" + `{"outcome":"running","buildId":"` + id + `"}`}
	}
	final := model.ToolResult{Text: `{"outcome":"ok","changedClasses":{"classes":[{"className":"Service","sha256":"` + sha + `","status":"applied"}]}}`}
	search := model.ToolResult{Name: "ToolSearch", Text: "found"}
	s := func(state, owner string) string { return "BUILD " + state + " request=r owner=" + owner }
	one := []string{s("started", "a"), s("ok", "a")}
	for _, c := range []struct {
		name     string
		from     int
		received []model.ToolResult
		resumes  []string
		builds   []string
		want     bool
	}{
		{"resumed to its result", 0, []model.ToolResult{running(id), running(id), final}, []string{id, id}, one, true},
		{"after ToolSearch", 1, []model.ToolResult{search, running(id), final}, []string{id}, one, true},
		{"no running answer", 0, []model.ToolResult{final}, nil, one, false},
		{"the host gave up", 0, []model.ToolResult{{Text: `tool "reclazz_safe_build" timed out after 6s`}}, nil, []string{s("started", "a"), s("failed", "a")}, false},
		{"still running at the end", 0, []model.ToolResult{running(id), running(id)}, []string{id}, one, false},
		{"a result between the running answers", 0, []model.ToolResult{running(id), final, running(id), final}, []string{id, id}, one, false},
		{"resumed another id", 0, []model.ToolResult{running(id), final}, []string{other}, one, false},
		{"two builds", 0, []model.ToolResult{running(id), running(other), final}, []string{id, other}, one, false},
		{"BUILD failed", 0, []model.ToolResult{running(id), final}, []string{id}, []string{s("started", "a"), s("failed", "a")}, false},
		{"a second build", 0, []model.ToolResult{running(id), final}, []string{id}, append(one, one...), false},
		{"other owners", 0, []model.ToolResult{running(id), final}, []string{id}, []string{s("started", "a"), s("ok", "b")}, false},
		{"other bytes", 0, []model.ToolResult{running(id), {Text: strings.ReplaceAll(final.Text, sha, strings.Repeat("cd", 32))}}, []string{id}, one, false},
		{"a final failure", 0, []model.ToolResult{running(id), {Text: `{"outcome":"failed"}`}}, []string{id}, one, false},
	} {
		got := resumedToResult(&Record{SafeBuildFrom: c.from, Received: c.received, Resumes: c.resumes, AgentBuilds: c.builds, ServiceSHA256: sha})
		if got.OK != c.want || got.Detail == "" {
			t.Errorf("%s: resumedToResult = %+v, want ok %v", c.name, got, c.want)
		}
	}
}

// The committed docs/host-matrix.md is the last run's, written by the
// code of this tree: its kept text (sections 1 and 2, each host's row) is
// the code's, every host's lanes ran at its pinned version, section 6 has
// each host's heading and user steps, and docs/hosts.md links each host's
// part of section 6. A change to the hosts, the scenarios or the kept text
// without `go tool mage hosts` (or `hostsDoc`) fails here.
func TestCommittedMatrixIsCurrent(t *testing.T) {
	read := func(name string) string {
		b, err := os.ReadFile(filepath.Join("..", "..", "docs", name))
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	doc, hosts := read("host-matrix.md"), read("hosts.md")
	if !strings.HasPrefix(doc, matrixHead()) {
		t.Errorf("docs/host-matrix.md does not start with the kept text of sections 1 and 2: regenerate it")
	}
	if !strings.Contains(doc, seenIntro) {
		t.Errorf("docs/host-matrix.md lacks section 6 as kept: regenerate it")
	}
	for i, h := range Hosts {
		for _, sc := range Scenarios {
			if row := fmt.Sprintf("| %s | %s | %s | ", h.Name, h.Version, sc.Name); !strings.Contains(doc, row) {
				t.Errorf("docs/host-matrix.md has no row %q: the run is not of this version or scenario", row)
			}
		}
		for _, want := range []string{seenHeading(i, h), "- **The tool:** " + h.ToolName, "- **What the user must do:** " + h.UserSteps + ".\n"} {
			if !strings.Contains(doc, want) {
				t.Errorf("docs/host-matrix.md lacks %q", want)
			}
		}
		if link := fmt.Sprintf("(host-matrix.md#6.%d)", i+1); !strings.Contains(hosts, link) {
			t.Errorf("docs/hosts.md does not link %s's part of the matrix, %s", h.Title, link)
		}
	}
}

func TestSeenRow(t *testing.T) {
	rec := func(from int, res ...model.ToolResult) *Record { return &Record{SafeBuildFrom: from, Received: res} }
	failedText := "build \"broken\": failed (exit 1): 2 errors\nsrc/Broken.java:3:16: error: x"
	running := `{"outcome":"running","buildId":"` + strings.Repeat("1f", 16) + `"}`
	for _, c := range []struct {
		name  string
		rec   *Record
		first bool
		want  string
	}{
		{"claude, failed", rec(1, model.ToolResult{Text: "found"}, model.ToolResult{IsError: true, Text: failedText}), false,
			"the text | `is_error: true` | nothing"},
		{"claude, running", rec(1, model.ToolResult{Text: "found"}, model.ToolResult{Text: running}, model.ToolResult{Text: `{"outcome":"ok"}`}), true,
			"the structured result (JSON) | no | nothing"},
		{"codex, failed", rec(0, model.ToolResult{Text: "Wall time: 0.7 seconds\nOutput:\n" + `{"outcome":"failed"}`}), false,
			"the structured result (JSON) | no | `Wall time: 0.7 seconds Output:`"},
		{"codex, ok", rec(0, model.ToolResult{Text: "Wall time: 1 seconds\nOutput:\n" + `{"outcome":"ok"}`}), false,
			"the structured result (an `ok` answer's text is that JSON too) | no | `Wall time: 1 seconds Output:`"},
		{"gemini, failed", rec(0, model.ToolResult{Text: `MCP tool 'reclazz_safe_build' reported tool error: [{"text":"build \"broken\": failed (exit 1)"},{"structuredContent":{"outcome":"failed"}}]`}), false,
			"the text and the structured result | in words, before the result | `MCP tool 'reclazz_safe_build' reported tool error: [{\"text\":\"`"},
		{"gemini, running", rec(0, model.ToolResult{Text: "<untrusted_context>\nbuild \"slow\": running after 4s; buildId x\n</untrusted_context>"}), false,
			"the text | no | `<untrusted_context>`"},
		{"a timeout", rec(0, model.ToolResult{IsError: true, Text: "tool timed out | after 3s"}), false,
			"neither the text nor the structured result: `tool timed out \\| after 3s` | `is_error: true` | `tool timed out \\| after 3s`"},
		{"no result", rec(1, model.ToolResult{Text: "found"}), false, "nothing: no result reached the model | – | –"},
		{"no lane", nil, false, "– (the lane did not run) | – | –"},
	} {
		if got := seenRow(c.rec, c.first); got != c.want {
			t.Errorf("%s: seenRow =\n%s\nwant\n%s", c.name, got, c.want)
		}
	}
}
