package tools

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/rogpeppe/go-internal/txtar"

	"github.com/buildguard/buildguard/service/diagnostics"
	"github.com/buildguard/buildguard/service/safebuild"
)

// BenchmarkFailedText reports, for each failing build of the diagnostics
// corpus, its raw output bytes against the text a failed reclazz_safe_build
// result answers with (docs/safe-build.md#12: outcome and counts, every
// diagnostic, detail and the log's path), and checks that every error is in
// that text. Target: at least 10× smaller.
func BenchmarkFailedText(b *testing.B) {
	paths, err := filepath.Glob(filepath.Join("..", "diagnostics", "testdata", "corpus", "*.txtar"))
	if err != nil || len(paths) == 0 {
		b.Fatalf("no corpus: %v", err)
	}
	for _, path := range paths {
		ar, err := txtar.ParseFile(path)
		if err != nil {
			b.Fatal(err)
		}
		dir, exit := "", ""
		for _, l := range strings.Split(string(ar.Comment), "\n") {
			if v, ok := strings.CutPrefix(l, "dir: "); ok {
				dir = v
			}
			if v, ok := strings.CutPrefix(l, "exit: "); ok {
				exit = v
			}
		}
		var output []byte
		for _, f := range ar.Files {
			if f.Name == "output" {
				output = f.Data
			}
		}
		if exit == "0" {
			continue
		}
		b.Run(strings.TrimSuffix(filepath.Base(path), ".txtar"), func(b *testing.B) {
			var text string
			var sum diagnostics.Summary
			for b.Loop() {
				p := diagnostics.New(diagnostics.Config{Dir: dir})
				p.Write(output)
				sum = p.Summary()
				code := 1
				log := filepath.Join(dir, ".buildguard", "logs", "20261202T070000000Z-gradle.log")
				res := &safebuild.Result{Build: "gradle", Outcome: safebuild.OutcomeFailed, ExitCode: &code,
					Detail:      "the build exited with code 1; BUILD failed was acknowledged: the agent keeps serving the classes it had and holds the new output until this project's next successful safe build. Read diagnostics (and output.logFile), fix the build and call again",
					Diagnostics: sum.Diagnostics, DiagnosticsOmitted: sum.Omitted, FailedTasks: sum.FailedTasks, FailedModules: sum.FailedModules}
				res.Output.LogFile = &log
				text = failedText(res)
			}
			for _, d := range sum.Diagnostics {
				if d.Severity == diagnostics.SeverityError && !strings.Contains(text, d.String()) {
					b.Fatalf("error %q is not in the text:\n%s", d, text)
				}
			}
			b.ReportMetric(float64(len(output)), "raw-bytes")
			b.ReportMetric(float64(len(text)), "text-bytes")
			b.ReportMetric(float64(len(output))/float64(len(text)), "x-smaller")
		})
	}
}
