package safebuild

import (
	"context"
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/buildguard/buildguard/harness/scale"
)

// BenchmarkWatch measures the search for changed classes where the kernel
// reports the build's changes (docs/safe-build.md#8), on the projects of
// BenchmarkScan: starting the watch before the hold (every directory
// watched and read, no file's metadata), per 10,000 class files; and the
// report after a build that rewrote one class file, in ms. A part of
// docs/performance.md#5.
func BenchmarkWatch(b *testing.B) {
	for _, n := range []int{1000, 20000, 100000} {
		b.Run(fmt.Sprintf("files=%d", n), func(b *testing.B) {
			p := scale.Project{Dir: b.TempDir(), Classes: n, Packages: 100}
			if err := p.Generate(); err != nil {
				b.Fatal(err)
			}
			dirs := []watchedDir{{named: p.OutputDir(), root: p.OutputDir()}}
			var start, report time.Duration
			for b.Loop() {
				t0 := time.Now()
				w := startWatch(context.Background(), dirs)
				start += time.Since(t0)
				if w == nil {
					b.Fatal("the kernel was not asked to watch the project")
				}
				now := time.Now()
				if err := os.Chtimes(p.Path(n/2), now, now); err != nil {
					b.Fatal(err)
				}
				t0 = time.Now()
				changed, problems, lost := w.changes(context.Background(), dirs)
				report += time.Since(t0)
				if len(changed) != 1 || len(problems) > 0 || lost != "" {
					b.Fatalf("%d changed, problems %q, lost %q; want 1", len(changed), problems, lost)
				}
			}
			b.ReportMetric(float64(start)/float64(time.Millisecond)*10000/float64(n)/float64(b.N), "start-ms/10k")
			b.ReportMetric(float64(report)/float64(time.Millisecond)/float64(b.N), "report-1-ms")
		})
	}
}
