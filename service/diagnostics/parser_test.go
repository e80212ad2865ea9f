package diagnostics

import (
	"bytes"
	"fmt"
	"runtime"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"
)

func parse(dir, output string) Summary { return parseAll(dir, []byte(output)) }

// TestChunkingDoesNotMatter: the output split anywhere, even byte by byte,
// gives the same summary as in one write.
func TestChunkingDoesNotMatter(t *testing.T) {
	for _, e := range loadCorpus(t) {
		whole := parseAll(e.dir, e.output)
		p := New(Config{Dir: e.dir})
		for i := range e.output {
			p.Write(e.output[i : i+1])
		}
		if diff := cmp.Diff(whole, p.Summary(), cmp.AllowUnexported(Diagnostic{})); diff != "" {
			t.Errorf("%s: byte by byte differs (-whole +bytes):\n%s", e.name, diff)
		}
	}
}

// TestOrderMergeAndLimit: errors come before warnings, each in order of
// first appearance; a repeated diagnostic is listed once; at most
// MaxDiagnostics are listed and the rest counted, also past what is kept.
func TestOrderMergeAndLimit(t *testing.T) {
	var out strings.Builder
	out.WriteString("/p/W.java:1: warning: [deprecation] first warning\n")
	for i := 1; i <= 120; i++ {
		fmt.Fprintf(&out, "/p/E.java:%d: error: error %d\n", i, i)
		fmt.Fprintf(&out, "/p/E.java:%d: error: error %d\n", i, i) // merged
	}
	for i := 1; i <= 120; i++ {
		fmt.Fprintf(&out, "/p/E.java:%d: error: error %d\n", i, i) // merged, also past the kept ones
	}
	s := parse("/p", out.String())
	if len(s.Diagnostics) != MaxDiagnostics || s.Errors != 120 || s.Warnings != 1 || s.Omitted != 71 {
		t.Fatalf("listed %d, errors %d, warnings %d, omitted %d; want 50, 120, 1, 71", len(s.Diagnostics), s.Errors, s.Warnings, s.Omitted)
	}
	for i, d := range s.Diagnostics {
		if d.Severity != SeverityError || d.File != "E.java" || d.Line != i+1 {
			t.Fatalf("diagnostic %d is %v", i, d)
		}
	}
	s = parse("/p", "/p/W.java:1: warning: w\n/p/E.java:1: error: e\n")
	if s.Diagnostics[0].Severity != SeverityError || s.Diagnostics[1].Severity != SeverityWarning {
		t.Fatalf("errors do not come first: %v", s.Diagnostics)
	}
}

// TestFormats: one line of each format the package reads, with what it
// must yield.
func TestFormats(t *testing.T) {
	for _, tc := range []struct {
		name, out string
		want      Diagnostic
	}{
		{"javac", "/p/b/B.java:3: error: cannot find symbol\n        return x;\n               ^\n  symbol:   variable x\n  location: class B\n1 error\n",
			Diagnostic{Severity: "error", File: "b/B.java", Line: 3, Column: 16, Message: "cannot find symbol; symbol: variable x; location: class B"}},
		{"javac outside the project", "/elsewhere/B.java:3: warning: w\n",
			Diagnostic{Severity: "warning", File: "/elsewhere/B.java", Line: 3, Message: "w"}},
		{"javac global", "error: invalid source release: 99\n", Diagnostic{Severity: "error", Message: "invalid source release: 99"}},
		{"maven", "[INFO] --- maven-compiler-plugin:3.10.1:testCompile (default-testCompile) @ b ---\n[ERROR] /p/b/T.java:[12,5] ';' expected\n",
			Diagnostic{Severity: "error", File: "b/T.java", Line: 12, Column: 5, Message: "';' expected", Module: "b", Task: "maven-compiler-plugin:3.10.1:testCompile (default-testCompile)"}},
		{"maven windows", `[WARNING] C:\p\b\T.java:[2,1] w` + "\n", Diagnostic{Severity: "warning", File: `C:\p\b\T.java`, Line: 2, Column: 1, Message: "w"}},
		{"maven failed goal", "[ERROR] Failed to execute goal on project b: Could not resolve dependencies for project x:b:jar:1: boom -> [Help 1]\n",
			Diagnostic{Severity: "error", Message: "Could not resolve dependencies for project x:b:jar:1: boom", Module: "b"}},
		{"gradle block", "* What went wrong:\nA problem occurred evaluating project ':b'.\n> Could not find method compile() for arguments [x].\n\n",
			Diagnostic{Severity: "error", Message: "A problem occurred evaluating project ':b'. Could not find method compile() for arguments [x].", Module: "b"}},
		{"gradle 4 glued task", ":x:y:compileJava/p/x/y/Y.java:1: error: e\n",
			Diagnostic{Severity: "error", File: "x/y/Y.java", Line: 1, Message: "e", Module: "x:y", Task: ":x:y:compileJava"}},
		{"kotlin uri", "e: file:///p/a%20b/K.kt:12:5 Unresolved reference: foo\n",
			Diagnostic{Severity: "error", File: "a b/K.kt", Line: 12, Column: 5, Message: "Unresolved reference: foo"}},
		{"kotlin old", "w: /p/K.kt: (1, 2): never used\n", Diagnostic{Severity: "warning", File: "K.kt", Line: 1, Column: 2, Message: "never used"}},
		{"kotlin bare", "e: java.lang.OutOfMemoryError: Java heap space\n", Diagnostic{Severity: "error", Message: "java.lang.OutOfMemoryError: Java heap space"}},
		{"colours", "\x1b[1;31m[ERROR]\x1b[m /p/B.java:[1,2] red\n", Diagnostic{Severity: "error", File: "B.java", Line: 1, Column: 2, Message: "red"}},
		{"crlf", "C:\\p\\B.java:3: error: e\r\n", Diagnostic{Severity: "error", File: `C:\p\B.java`, Line: 3, Message: "e"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := parse("/p", tc.out)
			if len(s.Diagnostics) != 1 {
				t.Fatalf("got %d diagnostics: %v", len(s.Diagnostics), s.Diagnostics)
			}
			if diff := cmp.Diff(tc.want, s.Diagnostics[0], cmp.AllowUnexported(Diagnostic{})); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

// TestNoiseIsNoDiagnostic: ordinary output yields nothing.
func TestNoiseIsNoDiagnostic(t *testing.T) {
	s := parse("/p", "BUILD SUCCESSFUL in 2s\n[INFO] Compiling 1 source file\n[WARNING] Using platform encoding (UTF-8 actually)\nNote: Some input files use or override a deprecated API.\n:a:compileJava\n> Task :b:classes UP-TO-DATE\n[ERROR] \n[ERROR] -> [Help 1]\nerror\n")
	if len(s.Diagnostics) != 0 || len(s.FailedTasks) != 0 {
		t.Fatalf("noise parsed as %+v", s)
	}
}

// TestLongLinesAreCut: a line past MaxLineBytes is read up to it, a message
// past MaxMessageBytes is cut on a character boundary, and the line after
// is read normally.
func TestLongLinesAreCut(t *testing.T) {
	long := "/p/B.java:1: error: " + strings.Repeat("ü", 3*MaxLineBytes) + "\n/p/C.java:2: error: next\n"
	s := parse("/p", long)
	if len(s.Diagnostics) != 2 || s.Diagnostics[1].File != "C.java" {
		t.Fatalf("got %v", s.Diagnostics)
	}
	m := s.Diagnostics[0].Message
	if len(m) > MaxMessageBytes || !utf8.ValidString(m) || !strings.HasPrefix(m, "üü") {
		t.Fatalf("message of %d bytes, valid %v", len(m), utf8.ValidString(m))
	}
}

// TestFlatMemory: 100 MB of output with a diagnostic on every tenth line
// leaves the parser's state within its bounds and the heap where it was.
func TestFlatMemory(t *testing.T) {
	total := 100 << 20
	if testing.Short() {
		total = 10 << 20
	}
	var chunk bytes.Buffer
	p := New(Config{Dir: "/p"})
	runtime.GC()
	var before runtime.MemStats
	runtime.ReadMemStats(&before)
	n := 0
	for fed := 0; fed < total; fed += chunk.Len() {
		chunk.Reset()
		for chunk.Len() < 1<<20 {
			n++
			fmt.Fprintf(&chunk, "/p/src/F%d.java:%d: error: cannot find symbol number %d\n", n%1000, n, n)
			for range 9 {
				chunk.WriteString("[INFO] Compiling 1 source file to /p/target/classes and some more text here\n")
			}
		}
		p.Write(chunk.Bytes())
	}
	s := p.Summary()
	runtime.GC()
	var after runtime.MemStats
	runtime.ReadMemStats(&after)
	if len(p.errs) > MaxDiagnostics || len(p.seen) > maxSeen || cap(p.line) > 2*MaxLineBytes {
		t.Fatalf("state beyond its bounds: %d listed, %d hashes, line buffer %d", len(p.errs), len(p.seen), cap(p.line))
	}
	if s.Errors < maxSeen || len(s.Diagnostics) != MaxDiagnostics {
		t.Fatalf("errors %d, listed %d", s.Errors, len(s.Diagnostics))
	}
	if grew := int64(after.HeapAlloc) - int64(before.HeapAlloc); grew > 8<<20 {
		t.Fatalf("the heap grew by %d bytes while parsing %d bytes", grew, total)
	}
}

// TestText: one line per diagnostic within the budget, and a line that
// counts the rest.
func TestText(t *testing.T) {
	var out strings.Builder
	for i := 1; i <= 80; i++ {
		fmt.Fprintf(&out, "/p/E.java:%d: error: %s\n", i, strings.Repeat("x", 100))
	}
	s := parse("/p", out.String())
	text := s.Text(4096)
	if len(text) > 4096 {
		t.Fatalf("text of %d bytes", len(text))
	}
	lines := strings.Split(strings.TrimSuffix(text, "\n"), "\n")
	last := lines[len(lines)-1]
	if want := fmt.Sprintf("… and %d more", 80-(len(lines)-1)); last != want {
		t.Fatalf("last line %q, want %q", last, want)
	}
	if !strings.HasPrefix(lines[0], "E.java:1: error: xxx") {
		t.Fatalf("first line %q", lines[0])
	}
	if got := s.Counts(); got != "80 errors, 0 warnings" {
		t.Fatalf("counts %q", got)
	}
	if (Summary{}).Text(4096) != "" {
		t.Fatal("an empty summary has text")
	}
}
