package diagnostics

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"unicode/utf8"
)

// TestCarriageReturnStartsALine: an error printed after a carriage return
// inside a line (a progress line the terminal overwrites) is read, and so
// is one before it.
func TestCarriageReturnStartsALine(t *testing.T) {
	s := parse("/p", "<=> 40% EXECUTING [2s]\r/p/B.java:3: error: cannot find symbol\n/p/C.java:4: error: first\r> :b:compileJava\r\n")
	if len(s.Diagnostics) != 2 || s.Diagnostics[0].File != "B.java" || s.Diagnostics[0].Line != 3 || s.Diagnostics[1].File != "C.java" {
		t.Fatalf("got %v", s.Diagnostics)
	}
}

// TestPathsSharingTheirStart: files whose paths share their first
// MaxMessageBytes bytes are different files: each is listed, each name is
// cut with its end kept, and the same file printed twice is merged.
func TestPathsSharingTheirStart(t *testing.T) {
	dir := "/p/" + strings.Repeat("d", 2*MaxMessageBytes)
	out := dir + "/A.java:1: error: same message\n" + dir + "/B.java:1: error: same message\n" + dir + "/A.java:1: error: same message\n"
	s := parse("/elsewhere", out)
	if len(s.Diagnostics) != 2 || s.Errors != 2 {
		t.Fatalf("%d listed, %d errors: %v", len(s.Diagnostics), s.Errors, s.Diagnostics)
	}
	for i, want := range []string{"/A.java", "/B.java"} {
		f := s.Diagnostics[i].File
		if len(f) > MaxMessageBytes || !strings.HasSuffix(f, want) || !strings.HasPrefix(f, "/p/ddd") {
			t.Fatalf("file %d is %q (%d bytes)", i, f, len(f))
		}
	}
}

// TestSummaryBounds: crafted output (names of 8 KiB, control characters,
// escape sequences, newlines in a file: URI, 100,000 distinct errors)
// yields a summary whose every string is bounded, visible and valid, whose
// JSON stays within MaxSummaryJSON, and whose counts are the true totals.
func TestSummaryBounds(t *testing.T) {
	long := strings.Repeat("m", MaxLineBytes)
	var out strings.Builder
	for i := range 60 {
		fmt.Fprintf(&out, "[INFO] --- maven-compiler-plugin:3.10.1:compile (%s%d) @ %s%d ---\n", long[:4000], i, long[:4000], i)
		fmt.Fprintf(&out, "[ERROR] /p/%s%d.java:[1,1] \x07\x08\x1b]0;title\x07bell\u009b31m\x1b[31mred\x1b\n", long[:3000], i)
		fmt.Fprintf(&out, "[ERROR] Failed to execute goal g:a:1:compile (%s%d) on project m%s%d: x\n", long[:3000], i, long[:3000], i)
	}
	out.WriteString("e: file:///p/a%0Ab%1B%5B31m.kt:3:1 newline\u2028in name\n")
	for i := range 100_000 {
		fmt.Fprintf(&out, "/p/E.java:%d: error: e\n", i+1)
	}
	for i := range 3 {
		fmt.Fprintf(&out, "/p/W.java:%d: warning: w\n", i+1)
	}
	s := parse("/p", out.String())
	if s.Errors != 100_000+60+1+1 || s.Warnings != 3 || s.Omitted != s.Errors+s.Warnings-len(s.Diagnostics) {
		t.Fatalf("errors %d, warnings %d, omitted %d, listed %d", s.Errors, s.Warnings, s.Omitted, len(s.Diagnostics))
	}
	b, err := json.Marshal(struct {
		D []Diagnostic
		T []string
		M []string
	}{s.Diagnostics, s.FailedTasks, s.FailedModules})
	if err != nil || len(b) > MaxSummaryJSON {
		t.Fatalf("the summary takes %d bytes of JSON (%v), more than %d", len(b), err, MaxSummaryJSON)
	}
	if len(s.Diagnostics) == 0 || len(s.FailedTasks) == 0 || len(s.FailedModules) == 0 {
		t.Fatalf("%d listed, %d tasks, %d modules", len(s.Diagnostics), len(s.FailedTasks), len(s.FailedModules))
	}
	check := func(what, v string, most int) {
		t.Helper()
		if len(v) > most || !utf8.ValidString(v) || strings.ContainsFunc(v, func(r rune) bool { return visibleRune(r) != r }) ||
			strings.Contains(v, "[31m") || strings.Contains(v, "title") {
			t.Fatalf("%s %.80q… (%d bytes)", what, v, len(v))
		}
	}
	for _, d := range s.Diagnostics {
		check("file", d.File, MaxMessageBytes)
		check("message", d.Message, MaxMessageBytes)
		check("module", d.Module, MaxNameBytes)
		check("task", d.Task, MaxNameBytes)
	}
	for _, n := range append(s.FailedTasks, s.FailedModules...) {
		check("name", n, MaxNameBytes)
	}
	if m := s.Diagnostics[0].Message; m != "??bellred" {
		t.Fatalf("message %q", m)
	}
	s = parse("/p", "e: file:///p/a%0Ab%1B%5B31m%C2%9B1m.kt:3:1 newline\u2028in name\n")
	if d := s.Diagnostics[0]; d.File != "a?b.kt" || d.Message != "newline in name" {
		t.Fatalf("file %q, message %q", d.File, d.Message)
	}
}
