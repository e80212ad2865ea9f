//go:build unix

package buildguard

import (
	"context"
	"strings"
	"testing"
	"time"
)

// BenchmarkContinuousCycle measures what guarding costs one cycle of a
// continuous build (docs/decisions.md#D20), without Gradle: the init
// script's connection to the channel, its start line, `BUILD started` to
// the fake agent and its acknowledgement, the ack to the script, its finish
// line, `BUILD ok` and its acknowledgement, the answer. One run of b.N
// cycles of a fake Gradle (the test binary) against the fake agent on
// loopback; the run's start-up is outside the timer's per-cycle figure,
// which is reported as µs/cycle.
func BenchmarkContinuousCycle(b *testing.B) {
	plan := strings.TrimSuffix(strings.Repeat("ok,", b.N), ",")
	h := newContinuousHarness(b, plan)
	h.cfg.Logger = nil
	g, err := New(h.cfg)
	if err != nil {
		b.Fatal(err)
	}
	var first, last time.Time
	n := 0
	b.ResetTimer()
	_, code, err := g.RunContinuous(context.Background(), h.argv, func(r CycleReport) {
		now := time.Now()
		if n == 0 {
			first = now
		}
		last = now
		n++
	})
	b.StopTimer()
	if err != nil || code != 0 || n != b.N {
		b.Fatalf("RunContinuous = %d, %v after %d of %d cycles\n%s", code, err, n, b.N, h.stdout)
	}
	if n > 1 {
		b.ReportMetric(float64(last.Sub(first).Microseconds())/float64(n-1), "µs/cycle")
	}
}
