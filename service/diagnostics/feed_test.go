package diagnostics

import (
	"fmt"
	"strings"
	"testing"
	"testing/synctest"
	"time"
)

// TestFeedNeverWaitsForTheParser: while the parser is stuck, writes still
// return at once; what finds the queue full is counted as not parsed, and
// the parser resumes at the next whole line after it.
func TestFeedNeverWaitsForTheParser(t *testing.T) {
	p := New(Config{Dir: "/p"})
	f := NewFeed(p, 1<<10)
	stuck := make(chan struct{})
	f.parse = func(b []byte) {
		<-stuck
		p.Write(b)
	}
	written := make(chan struct{})
	go func() {
		defer close(written)
		f.Write([]byte("/p/A.java:1: error: first\n"))
		for range 100 {
			f.Write([]byte(strings.Repeat("x", 100) + "\n"))
		}
		f.Write([]byte("/p/Lost.java:1: error: lost " + strings.Repeat("y", 200)))
		f.Write([]byte("and its end\n/p/B.java:2: error: second\n"))
	}()
	select {
	case <-written:
	case <-time.After(10 * time.Second):
		close(stuck)
		t.Fatal("Write waited for the parser for 10 s")
	}
	close(stuck)
	s, dropped := f.Summary(time.Minute)
	got := fmt.Sprint(s.Diagnostics)
	if dropped == 0 || len(s.Diagnostics) != 2 || s.Diagnostics[0].File != "A.java" || s.Diagnostics[1].File != "B.java" {
		t.Fatalf("dropped %d, diagnostics %s", dropped, got)
	}
}

// TestFeedSummaryStopsWaiting: a parser that does not finish in time is
// stopped after the piece it reads, and the rest of the queue is counted
// as not parsed; a write after it is counted too.
func TestFeedSummaryStopsWaiting(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		p := New(Config{Dir: "/p"})
		f := NewFeed(p, 0)
		stuck := make(chan struct{})
		f.parse = func(b []byte) {
			<-stuck
			p.Write(b)
		}
		f.Write([]byte("/p/A.java:1: error: first\n"))
		second := "/p/B.java:1: error: second\n"
		f.Write([]byte(second))
		type result struct {
			s       Summary
			dropped int64
		}
		done := make(chan result, 1)
		go func() {
			s, d := f.Summary(time.Minute)
			done <- result{s, d}
		}()
		time.Sleep(time.Minute) // the bubble's clock: Summary's wait runs out
		synctest.Wait()
		select {
		case r := <-done:
			t.Fatalf("Summary returned while the parser was stuck: %v", r)
		default:
		}
		close(stuck)
		r := <-done
		if r.dropped != int64(len(second)) || len(r.s.Diagnostics) != 1 || r.s.Diagnostics[0].File != "A.java" {
			t.Fatalf("dropped %d, diagnostics %v", r.dropped, r.s.Diagnostics)
		}
		f.Write([]byte("/p/C.java:1: error: late\n"))
		if _, dropped := f.Summary(time.Minute); dropped != r.dropped+int64(len("/p/C.java:1: error: late\n")) {
			t.Fatalf("dropped %d after a late write", dropped)
		}
	})
}
