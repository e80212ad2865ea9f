package diagnostics

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/rogpeppe/go-internal/txtar"
)

var update = flag.Bool("update", false, "rewrite the summary sections of testdata/corpus/*.txtar")

// entry is one corpus file: a build's output and what it must yield.
type entry struct {
	name    string
	path    string
	dir     string // the project directory the build ran in
	exit    int
	output  []byte
	wants   []want
	summary []byte // the golden summary, "" when missing
	ar      *txtar.Archive
}

func loadCorpus(t testing.TB) []entry {
	t.Helper()
	paths, err := filepath.Glob(filepath.Join("testdata", "corpus", "*.txtar"))
	if err != nil || len(paths) == 0 {
		t.Fatalf("no corpus: %v", err)
	}
	var out []entry
	for _, path := range paths {
		ar, err := txtar.ParseFile(path)
		if err != nil {
			t.Fatal(err)
		}
		e := entry{name: strings.TrimSuffix(filepath.Base(path), ".txtar"), path: path, ar: ar}
		for _, l := range strings.Split(string(ar.Comment), "\n") {
			k, v, _ := strings.Cut(l, ": ")
			switch k {
			case "dir":
				e.dir = v
			case "exit":
				e.exit, _ = strconv.Atoi(v)
			}
		}
		for _, f := range ar.Files {
			switch f.Name {
			case "output":
				e.output = f.Data
			case "summary":
				e.summary = f.Data
			case "want":
				for _, l := range strings.Split(strings.TrimSpace(string(f.Data)), "\n") {
					fs := strings.SplitN(l, "\t", 4)
					if len(fs) != 4 {
						t.Fatalf("%s: bad want line %q", path, l)
					}
					n, _ := strconv.Atoi(fs[2])
					e.wants = append(e.wants, want{fs[0], fs[1], n, fs[3]})
				}
			}
		}
		if e.output == nil || e.dir == "" {
			t.Fatalf("%s: no output section or dir line", path)
		}
		out = append(out, e)
	}
	return out
}

func parseAll(dir string, output []byte) Summary {
	p := New(Config{Dir: dir})
	p.Write(output)
	return p.Summary()
}

// TestCorpus: every error and warning each build of the corpus is known to
// have is among its diagnostics with its file, line and message, and the
// whole summary matches its golden section (-update rewrites it).
func TestCorpus(t *testing.T) {
	entries := loadCorpus(t)
	real := 0
	for _, e := range entries {
		if strings.Contains(string(e.ar.Comment), "source: captured") {
			real++
		}
		t.Run(e.name, func(t *testing.T) {
			s := parseAll(e.dir, e.output)
			if len(e.wants) == 0 {
				t.Fatal("the entry names no diagnostic it must yield")
			}
			for _, w := range e.wants {
				if !hasDiagnostic(s, w) {
					t.Errorf("missing %v in:\n%s", w, s.Text(1<<20))
				}
			}
			if e.exit != 0 && s.Errors == 0 {
				t.Errorf("a failed build without errors: %+v", s)
			}
			if e.exit == 0 && s.Errors != 0 {
				t.Errorf("a good build with errors: %+v", s)
			}
			got := golden(s)
			if *update {
				files := []txtar.File{}
				for _, f := range e.ar.Files {
					if f.Name != "summary" {
						files = append(files, f)
					}
				}
				e.ar.Files = append(files, txtar.File{Name: "summary", Data: got})
				if err := os.WriteFile(e.path, txtar.Format(e.ar), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			if !bytes.Equal(got, e.summary) {
				t.Errorf("summary differs from the golden one (-update rewrites it):\ngot:\n%s\nwant:\n%s", got, e.summary)
			}
		})
	}
	if real < 12 {
		t.Errorf("the corpus has %d real captured builds, want at least 12", real)
	}
}

func hasDiagnostic(s Summary, w want) bool {
	for _, d := range s.Diagnostics {
		if d.Severity == w.severity && d.File == w.file && d.Line == w.line && strings.Contains(d.Message, w.message) {
			return true
		}
	}
	return false
}

// golden is the summary as the corpus keeps it: indented JSON and the text.
func golden(s Summary) []byte {
	b, _ := json.MarshalIndent(struct {
		Diagnostics   []Diagnostic `json:"diagnostics"`
		Omitted       int          `json:"omitted"`
		Errors        int          `json:"errors"`
		Warnings      int          `json:"warnings"`
		FailedTasks   []string     `json:"failedTasks"`
		FailedModules []string     `json:"failedModules"`
	}{s.Diagnostics, s.Omitted, s.Errors, s.Warnings, s.FailedTasks, s.FailedModules}, "", "  ")
	return append(append(b, '\n'), s.Text(4096)...)
}
