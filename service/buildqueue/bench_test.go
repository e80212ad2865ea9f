package buildqueue

import (
	"context"
	"os/exec"
	"slices"
	"testing"
	"time"
)

func median(d []time.Duration) float64 {
	s := slices.Clone(d)
	slices.Sort(s)
	return float64(s[len(s)/2].Microseconds()) / 1000
}

// BenchmarkUncontended is the queue's cost per build when nothing else
// waits (docs/safe-build.md#4; target under 2 ms): a build (`true`) with its
// Wait and Release next to the same build without the queue, alternating in
// each iteration. It reports the medians (build-ms, queued-ms) and the
// median of the per-iteration differences (overhead-ms).
func BenchmarkUncontended(b *testing.B) {
	dir, q := project(b), newQueue()
	ctx := context.Background()
	run := func() {
		if err := exec.Command("true").Run(); err != nil {
			b.Fatal(err)
		}
	}
	var bare, queued, diff []time.Duration
	for b.Loop() {
		start := time.Now()
		run()
		d := time.Since(start)
		start = time.Now()
		t, err := q.Wait(ctx, Request{Project: dir, Name: "classes", Key: "classes"})
		if err != nil {
			b.Fatal(err)
		}
		run()
		t.Release(nil)
		w := time.Since(start)
		bare, queued, diff = append(bare, d), append(queued, w), append(diff, w-d)
	}
	b.ReportMetric(median(bare), "build-ms")
	b.ReportMetric(median(queued), "queued-ms")
	b.ReportMetric(median(diff), "overhead-ms")
}

// BenchmarkHandover is the gap between one build's Release and the start of
// the build waiting behind it (target under 20 ms): medians and the worst,
// as handover-ms and worst-ms.
func BenchmarkHandover(b *testing.B) {
	dir, q := project(b), newQueue()
	ctx := context.Background()
	var gaps []time.Duration
	for b.Loop() {
		first, err := q.Wait(ctx, Request{Project: dir, Name: "first"})
		if err != nil {
			b.Fatal(err)
		}
		in := make(chan struct{}, 1)
		done := make(chan time.Time, 1)
		go func() {
			t, err := q.Wait(ctx, Request{Project: dir, Name: "next", Report: func(Status) {
				select {
				case in <- struct{}{}:
				default:
				}
			}})
			at := time.Now()
			if err != nil {
				b.Error(err)
			} else {
				t.Release(nil)
			}
			done <- at
		}()
		<-in
		released := time.Now()
		first.Release(nil)
		gaps = append(gaps, (<-done).Sub(released))
	}
	b.ReportMetric(median(gaps), "handover-ms")
	b.ReportMetric(float64(slices.Max(gaps).Microseconds())/1000, "worst-ms")
}
