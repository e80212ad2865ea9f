package tools

import (
	"fmt"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/buildguard/buildguard/service/diagnostics"
	"github.com/buildguard/buildguard/service/safebuild"
)

// TestFailedTextIsBounded: with 50 long diagnostics, more omitted, a long
// detail and a long path, the text stays within MaxFailedText, valid UTF-8,
// leads with the first error, counts every error found (not only those
// listed) and what it left out; without diagnostics it shows the end of the
// output instead, at most 256 lines in all.
func TestFailedTextIsBounded(t *testing.T) {
	t.Parallel()
	var ds []diagnostics.Diagnostic
	for i := 1; i <= diagnostics.MaxDiagnostics; i++ {
		ds = append(ds, diagnostics.Diagnostic{Severity: "error", File: "b/src/main/java/Größe.java", Line: i, Column: 3, Message: strings.Repeat("ü", 250)})
	}
	code := 1
	log := "/p/" + strings.Repeat("d", 300) + "/.buildguard/logs/20261202T010203456Z-gradle.log"
	res := &safebuild.Result{Build: "gradle", Outcome: safebuild.OutcomeFailed, ExitCode: &code, Detail: strings.Repeat("detail ", 400),
		Diagnostics: ds, DiagnosticsOmitted: 70, Errors: 120, FailedTasks: []string{":b:compileJava"}, FailedModules: []string{"b"}}
	res.Output.LogFile = &log
	text := failedText(res)
	lines := strings.Split(text, "\n")
	if len(text) > MaxFailedText || !utf8.ValidString(text) {
		t.Fatalf("text of %d bytes, valid %v", len(text), utf8.ValidString(text))
	}
	if !strings.HasPrefix(lines[0], `build "gradle": failed (exit 1): 120 errors, 0 warnings; failed tasks: :b:compileJava; failed modules: b`) ||
		!strings.HasPrefix(lines[1], "b/src/main/java/Größe.java:1:3: error: üü") {
		t.Fatalf("text starts:\n%s\n%s", lines[0], lines[1])
	}
	shown := 0
	for _, l := range lines {
		if strings.HasPrefix(l, "b/src/main/java/") {
			shown++
		}
	}
	if want := fmt.Sprintf("… and %d more", diagnostics.MaxDiagnostics-shown+70); !strings.Contains(text, want) {
		t.Errorf("no %q in:\n%s", want, text)
	}
	if !strings.Contains(text, "The whole log: "+log) {
		t.Errorf("the log's path is missing:\n%s", text)
	}

	res.Diagnostics, res.DiagnosticsOmitted = nil, 0
	res.Output.Tail = strings.Repeat("[INFO] some line of the build\n", 500) + "the last line\n"
	text = failedText(res)
	if len(text) > MaxFailedText || !strings.Contains(text, "the output ends:\n[INFO] some line") || !strings.Contains(text, "the last line\n") {
		t.Errorf("without diagnostics (%d bytes):\n%s", len(text), text)
	}
	res.Output.Tail = strings.Repeat("x\n", 3000) + "the last line\n" // more lines than a tail holds
	if text = failedText(res); strings.Count(text, "\n") > 256 || !strings.Contains(text, "x\nthe last line\n") {
		t.Errorf("short lines: %d lines, %d bytes", strings.Count(text, "\n"), len(text))
	}
	res.Detail = "the agent said:" + strings.Repeat("\n.", 1000) // a detail and a path are one line each
	bad := "/p/a\nb/.buildguard/logs/20261202T010203456Z-gradle.log"
	res.Output.LogFile = &bad
	if text = failedText(res); strings.Count(text, "\n") > 256 || !strings.Contains(text, "\nthe agent said:?.?.") || !strings.Contains(text, "The whole log: /p/a?b/") {
		t.Errorf("a detail of 1,000 lines: %d lines in all:\n%s", strings.Count(text, "\n"), text)
	}
}

// TestFailedTextShowsTheOutputWithoutACause: when no diagnostic names a
// file (mvn -q's "Compilation failure" alone, or a message without a
// place), the end of the output follows the diagnostics, within
// MaxFailedText; a located error stands alone.
func TestFailedTextShowsTheOutputWithoutACause(t *testing.T) {
	t.Parallel()
	code := 1
	log := "/p/.buildguard/logs/20261202T010203456Z-maven.log"
	res := &safebuild.Result{Build: "maven", Outcome: safebuild.OutcomeFailed, ExitCode: &code, Detail: "exited 1", Errors: 1,
		Diagnostics: []diagnostics.Diagnostic{{Severity: "error", Message: "Compilation failure", Module: "a"}}}
	res.Output.LogFile = &log
	res.Output.Tail = strings.Repeat("[INFO] filler\n", 400) + "[ERROR] COMPILATION ERROR : \n[ERROR] Annotation processor 'com.Nope' not found\n[ERROR] -> [Help 1]\n"
	text := failedText(res)
	if len(text) > MaxFailedText || !strings.Contains(text, "error: Compilation failure\nThe output ends:\n[INFO] filler\n") ||
		!strings.Contains(text, "[ERROR] Annotation processor 'com.Nope' not found\n[ERROR] -> [Help 1]\n\nexited 1\n") {
		t.Fatalf("text of %d bytes:\n%s", len(text), text)
	}
	res.Diagnostics[0] = diagnostics.Diagnostic{Severity: "error", File: "b/B.java", Line: 3, Message: "cannot find symbol"}
	if text := failedText(res); strings.Contains(text, "filler") {
		t.Fatalf("a located error is followed by the output:\n%s", text)
	}
}
