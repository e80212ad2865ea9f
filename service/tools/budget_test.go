package tools

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/buildguard/buildguard/service/diagnostics"
	"github.com/buildguard/buildguard/service/safebuild"
)

// hostBudgets are what each host we configure hands its model of a tool
// result, and how much of it the host keeps (docs/hosts.md#9). They are
// figures observed of the hosts, kept here apart from the product's own
// bounds: a product bound that grows past a host's budget fails the test.
var hostBudgets = []struct {
	host string
	// structured: the host hands its model structuredContent, compact JSON;
	// else the text and each link as "[Resource link: NAME] URI (DESCRIPTION)".
	structured bool
	// bytes, chars and lines the host keeps; 0: no bound known.
	bytes, chars, lines int
}{
	{host: "Codex CLI 0.171.0", structured: true, bytes: 10 << 10, lines: 256}, // the JSON after "Wall time: …\nOutput:\n"
	// 25,000 tokens, an error cut near 11,000 characters; a token is at
	// least a byte.
	{host: "Claude Code 2.1.332", bytes: 25000, chars: 11000},
}

// hostileSummary is what the parser makes of the crafted output of the
// diagnostics bounds test: Maven names of 4,000 bytes, escape sequences and
// control characters, a file: URI with a newline, 100,000 distinct errors,
// three warnings.
func hostileSummary(t *testing.T) diagnostics.Summary {
	t.Helper()
	p := diagnostics.New(diagnostics.Config{Dir: "/p"})
	long := strings.Repeat("m", diagnostics.MaxLineBytes)
	for i := range 60 {
		fmt.Fprintf(p, "[INFO] --- maven-compiler-plugin:3.10.1:compile (%s%d) @ %s%d ---\n", long[:4000], i, long[:4000], i)
		fmt.Fprintf(p, "[ERROR] /p/%s%d.java:[1,1] \x07\x08\x1b]0;title\x07bell\u009b31m\x1b[31mred\x1b\n", long[:3000], i)
		fmt.Fprintf(p, "[ERROR] Failed to execute goal g:a:1:compile (%s%d) on project m%s%d: x\n", long[:3000], i, long[:3000], i)
	}
	io.WriteString(p, "e: file:///p/a%0Ab%1B%5B31m.kt:3:1 newline\u2028in name\n")
	for i := range 100_000 {
		fmt.Fprintf(p, "/p/src/main/java/E.java:%d: error: cannot find symbol \"<&>\"\n", i+1)
	}
	for i := range 3 {
		fmt.Fprintf(p, "/p/W.java:%d: warning: w\n", i+1)
	}
	return p.Summary()
}

// hostileTail is a tail as the capture keeps it, at its bounds: 100 lines,
// 16 KiB, every line full of what JSON escapes.
func hostileTail() string {
	line := strings.Repeat("\x1b[31m\"<&>\\\u2028\t", 10) + "\n"
	var b strings.Builder
	for i := 0; b.Len()+len(line)+16 <= safebuild.TailBytes && i < safebuild.TailLines-1; i++ {
		b.WriteString(line)
	}
	b.WriteString("BUILD FAILED\n")
	return b.String()
}

// hostileResults are results at every bound at once: each of a failed,
// an ok and a refused build.
func hostileResults(t *testing.T) map[string]*safebuild.Result {
	sum := hostileSummary(t)
	code, zero, owner := 1, 0, "owner-1"
	log := "/p/" + strings.Repeat("d", 300) + "/.buildguard/logs/20261203T010203456Z-maven.log"
	var classes []safebuild.ClassReceipt
	for i := range safebuild.MaxChangedClasses {
		classes = append(classes, safebuild.ClassReceipt{ClassName: fmt.Sprintf("app.%s%d", strings.Repeat("C", 240), i),
			SHA256: strings.Repeat("ab", 32), Status: "applied", Detail: strings.Repeat("applied with the built bytes ", 8)})
	}
	command := []string{"sh", "-c"}
	for i := range 256 {
		command = append(command, fmt.Sprintf("arg-%d-%s", i, strings.Repeat("\x01", 200)))
	}
	detail := "the agent said:" + strings.Repeat("\n<&>", 2500)
	failed := &safebuild.Result{Build: "maven", Command: command, Outcome: safebuild.OutcomeFailed, ExitCode: &code, Owner: &owner,
		Detail: detail, Diagnostics: sum.Diagnostics, DiagnosticsOmitted: sum.Omitted, Errors: sum.Errors, Warnings: sum.Warnings,
		FailedTasks: sum.FailedTasks, FailedModules: sum.FailedModules,
		Output: safebuild.Output{LogFile: &log, Lines: 400_000, Truncated: true, Tail: hostileTail()}}
	var warnings []diagnostics.Diagnostic
	for i := range diagnostics.MaxDiagnostics {
		warnings = append(warnings, diagnostics.Diagnostic{Severity: "warning", File: "a/src/main/java/" + strings.Repeat("W", 400) + ".java",
			Line: i + 1, Message: strings.Repeat("[deprecation] <T> & \"x\" ", 20)})
	}
	ok := &safebuild.Result{Build: "maven", Command: command, Outcome: safebuild.OutcomeOK, ExitCode: &zero, Owner: &owner,
		Detail: detail, Diagnostics: warnings, Warnings: 70, DiagnosticsOmitted: 20,
		Output:         safebuild.Output{LogFile: &log, Lines: 400_000, Truncated: true, Tail: hostileTail()},
		ChangedClasses: safebuild.ChangedClasses{Count: 100_000, Complete: true, Classes: classes}}
	refused := &safebuild.Result{Build: "maven", Command: command, Outcome: safebuild.OutcomeRefused, Detail: detail}
	return map[string]*safebuild.Result{"failed": failed, "ok": ok, "refused": refused}
}

// TestSafeBuildAnswerFitsEveryHost: at every bound at once (100,000
// errors, names of 4 KiB, escape sequences, a 16 KiB tail of what JSON
// escapes, 64 classes, a command of 256 long arguments, a detail of 10 KiB
// of short lines), whatever part of the answer each host hands its model
// fits that host's budget and leads with the outcome and the errors: the
// structured result (schema-valid, its counts true, the log's path said)
// and the text with its links.
func TestSafeBuildAnswerFitsEveryHost(t *testing.T) {
	t.Parallel()
	schema := toolOutputSchemas(t)[ToolSafeBuild]
	for name, res := range hostileResults(t) {
		t.Run(name, func(t *testing.T) {
			before := fmt.Sprint(len(res.Diagnostics), len(res.Command), len(res.ChangedClasses.Classes), res.Detail, res.Output.Tail)
			out, err := safeBuildAnswer(res)
			if err != nil {
				t.Fatal(err)
			}
			if after := fmt.Sprint(len(res.Diagnostics), len(res.Command), len(res.ChangedClasses.Classes), res.Detail, res.Output.Tail); before != after {
				t.Fatal("the answer changed the result it encodes")
			}
			if err := schema.Validate(instance(t, string(out.Data))); err != nil {
				t.Fatalf("breaks the output schema: %v", err)
			}
			checkStructured(t, res, out.Data)
			shown := out.Text
			if shown == "" {
				shown = string(out.Data)
			} else {
				checkText(t, res, out.Text)
			}
			for _, l := range out.Links {
				if l.Name == "" {
					t.Errorf("a resource_link without a name fails the whole call in Codex: %+v", l)
				}
				shown += fmt.Sprintf("\n[Resource link: %s] %s (%s)", l.Name, l.URI, l.Description)
			}
			for _, h := range hostBudgets {
				part := shown
				if h.structured { // after the line Codex puts first, HTML characters escaped
					longest, _ := json.Marshal(json.RawMessage(out.Data))
					part = "Wall time: 1234.5678 seconds\nOutput:\n" + string(longest)
				}
				if lines := strings.Count(part, "\n") + 1; (h.bytes > 0 && len(part) > h.bytes) || (h.lines > 0 && lines > h.lines) ||
					(h.chars > 0 && utf8.RuneCountInString(part) > h.chars) {
					t.Errorf("%s: %d bytes, %d characters, %d lines, over its budget", h.host, len(part), utf8.RuneCountInString(part), lines)
				}
			}
		})
	}
}

// checkStructured: data leads with the outcome, the exit code, the counts
// and the diagnostics, in that order; it lists the first diagnostics of
// res, counts every one, and says the log's path.
func checkStructured(t *testing.T, res *safebuild.Result, data []byte) {
	t.Helper()
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.Token()
	var keys []string
	for range 6 {
		k, _ := dec.Token()
		keys = append(keys, fmt.Sprint(k))
		var skip json.RawMessage
		dec.Decode(&skip)
	}
	if want := "outcome exitCode errors warnings diagnosticsOmitted diagnostics"; strings.Join(keys, " ") != want {
		t.Errorf("keys %v, want %s first", keys, want)
	}
	var got safebuild.Result
	if err := json.Unmarshal(data, &got); err != nil {
		t.Fatal(err)
	}
	if got.Errors != res.Errors || got.Warnings != res.Warnings || len(got.Diagnostics)+got.DiagnosticsOmitted != len(res.Diagnostics)+res.DiagnosticsOmitted {
		t.Errorf("errors %d, warnings %d, %d listed + %d omitted; want %d, %d, %d", got.Errors, got.Warnings, len(got.Diagnostics), got.DiagnosticsOmitted,
			res.Errors, res.Warnings, len(res.Diagnostics)+res.DiagnosticsOmitted)
	}
	if len(res.Diagnostics) > 0 && (len(got.Diagnostics) == 0 || got.Diagnostics[0] != res.Diagnostics[0]) {
		t.Errorf("the first diagnostic is not listed first: %v", got.Diagnostics)
	}
	if got.ChangedClasses.Count != res.ChangedClasses.Count || got.Output.Lines != res.Output.Lines {
		t.Errorf("count %d, lines %d: counts changed", got.ChangedClasses.Count, got.Output.Lines)
	}
	if (res.Output.LogFile == nil) != (got.Output.LogFile == nil) || (got.Output.LogFile != nil && *got.Output.LogFile != *res.Output.LogFile) {
		t.Errorf("logFile %v, want %v", got.Output.LogFile, res.Output.LogFile)
	}
	if cut := strings.TrimSuffix(res.Output.Tail, got.Output.Tail); got.Output.Tail != "" &&
		(len(cut)+len(got.Output.Tail) != len(res.Output.Tail) || (cut != "" && !strings.HasSuffix(cut, "\n"))) {
		t.Errorf("the tail is not the last whole lines of the output: %.200q", got.Output.Tail)
	}
	if got.Output.Tail != res.Output.Tail && !got.Output.Truncated {
		t.Error("a cut tail is not marked truncated")
	}
}

// checkText: the text leads with the outcome and the first error, within
// MaxFailedText, and names the log.
func checkText(t *testing.T, res *safebuild.Result, text string) {
	t.Helper()
	lines := strings.Split(text, "\n")
	if !strings.HasPrefix(lines[0], fmt.Sprintf("build %q: %s", res.Build, res.Outcome)) || len(text) > MaxFailedText || !utf8.ValidString(text) {
		t.Errorf("text of %d bytes starts %q", len(text), lines[0])
	}
	if len(lines) > 256 { // the fewest lines a host keeps (Codex)
		t.Errorf("text of %d lines", len(lines))
	}
	if len(res.Diagnostics) > 0 && !strings.HasPrefix(res.Diagnostics[0].String(), strings.TrimSuffix(lines[1], "…")) {
		t.Errorf("the text's second line is %q, not the first diagnostic", lines[1])
	}
	if res.Output.LogFile != nil && !strings.Contains(text, "The whole log: "+*res.Output.LogFile+"\n") {
		t.Errorf("the text does not name the log:\n%s", text)
	}
}
