package diagnostics

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"
	"github.com/rogpeppe/go-internal/txtar"
)

// FuzzParser: any output, split at any point, parses without a panic into a
// summary within its bounds, the same as in one write.
func FuzzParser(f *testing.F) {
	paths, _ := filepath.Glob(filepath.Join("testdata", "corpus", "*.txtar"))
	for _, path := range paths {
		if ar, err := txtar.ParseFile(path); err == nil {
			for _, file := range ar.Files {
				if file.Name == "output" {
					f.Add(file.Data, uint16(len(file.Data)/2))
				}
			}
		}
	}
	if _, err := os.Stat("testdata"); err != nil {
		f.Fatal(err)
	}
	f.Add([]byte("* What went wrong:\n:x:compileJava/p/B.java:1: error: e\n  ^\n"), uint16(3))
	f.Fuzz(func(t *testing.T, out []byte, split uint16) {
		whole := New(Config{Dir: "/p"})
		whole.Write(out)
		s := whole.Summary()
		at := int(split) % (len(out) + 1)
		parts := New(Config{Dir: "/p"})
		parts.Write(out[:at])
		parts.Write(out[at:])
		if diff := cmp.Diff(s, parts.Summary(), cmp.AllowUnexported(Diagnostic{})); diff != "" {
			t.Fatalf("split at %d differs:\n%s", at, diff)
		}
		if len(s.Diagnostics) > MaxDiagnostics || s.Omitted < 0 || s.Errors+s.Warnings != len(s.Diagnostics)+s.Omitted {
			t.Fatalf("counts: %d listed, %d omitted, %d errors, %d warnings", len(s.Diagnostics), s.Omitted, s.Errors, s.Warnings)
		}
		seenWarning := false
		for _, d := range s.Diagnostics {
			if d.Severity != SeverityError && d.Severity != SeverityWarning {
				t.Fatalf("severity %q", d.Severity)
			}
			if d.Severity == SeverityWarning {
				seenWarning = true
			} else if seenWarning {
				t.Fatal("an error after a warning")
			}
			if len(d.Message) > MaxMessageBytes || !utf8.ValidString(d.Message) || strings.ContainsAny(d.Message, "\n\r") {
				t.Fatalf("message %q", d.Message)
			}
			if len(d.File) > MaxMessageBytes || len(d.Module) > MaxNameBytes || len(d.Task) > MaxNameBytes ||
				strings.ContainsAny(d.File+d.Module+d.Task, "\n\r\x1b") || !utf8.ValidString(d.File+d.Module+d.Task) {
				t.Fatalf("names %q %q %q", d.File, d.Module, d.Task)
			}
			if d.Line < 0 || d.Column < 0 {
				t.Fatalf("position %d:%d", d.Line, d.Column)
			}
		}
		if len(s.Text(4096)) > 4096 {
			t.Fatal("text over budget")
		}
	})
}
