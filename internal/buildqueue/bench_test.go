package buildqueue

import (
	"context"
	"testing"
	"time"
)

// BenchmarkUncontended is the queue's cost per build when nothing else
// waits: one Wait and one Release (docs/safe-build.md#4; target under 2 ms).
func BenchmarkUncontended(b *testing.B) {
	dir, q := project(b), newQueue()
	ctx := context.Background()
	for b.Loop() {
		t, err := q.Wait(ctx, Request{Project: dir, Name: "classes", Key: "classes"})
		if err != nil {
			b.Fatal(err)
		}
		t.Release(nil)
	}
}

// BenchmarkHandover is the gap between one build's Release and the start
// of the build waiting behind it (target under 20 ms), reported as
// ms/handover.
func BenchmarkHandover(b *testing.B) {
	dir, q := project(b), newQueue()
	ctx := context.Background()
	var total time.Duration
	n := 0
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
		total += (<-done).Sub(released)
		n++
	}
	b.ReportMetric(float64(total.Microseconds())/1000/float64(n), "ms/handover")
}
