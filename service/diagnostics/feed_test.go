package diagnostics

import (
	"fmt"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"
)

// TestFeedStuckParserLosesOnlyWhatFindsNoRoom: while the parser is stuck,
// writes return after at most their share of waiting
// (TestFeedWaitsAtMostItsShare); what finds the queue full is counted as
// not parsed, and the parser resumes at the next whole line after it.
func TestFeedStuckParserLosesOnlyWhatFindsNoRoom(t *testing.T) {
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

// TestFeedWaitsForASlowParser: a parser slower than the build, but not
// half as fast, keeps up: the writer waits for room in the queue rather
// than dropping output, and every error is found.
func TestFeedWaitsForASlowParser(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		p := New(Config{Dir: "/p"})
		f := NewFeed(p, 2*feedChunk)
		f.parse = func(b []byte) {
			time.Sleep(7 * time.Millisecond) // the bubble's clock: parsing a piece
			p.Write(b)
		}
		const pieces = 50
		for i := range pieces {
			time.Sleep(5 * time.Millisecond) // the build printing a piece
			e := fmt.Sprintf("/p/E%d.java:1: error: cannot find symbol\n", i)
			f.Write([]byte(strings.Repeat("x", feedChunk-len(e)-1) + "\n" + e))
		}
		s, dropped := f.Summary(time.Minute)
		if dropped != 0 || s.Errors != pieces {
			t.Fatalf("dropped %d bytes, found %d of %d errors", dropped, s.Errors, pieces)
		}
	})
}

// TestFeedWaitsAtMostItsShare: with the parser stuck, the writer's waits
// for room take in all at most as long as its own time outside them, and
// each at most maxFeedWait; what finds no room then is not parsed.
func TestFeedWaitsAtMostItsShare(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		p := New(Config{Dir: "/p"})
		f := NewFeed(p, feedChunk)
		stuck := make(chan struct{})
		release := sync.OnceFunc(func() { close(stuck) })
		defer release()
		f.parse = func(b []byte) {
			<-stuck
			p.Write(b)
		}
		line := []byte(strings.Repeat("x", 99) + "\n")
		var own, waited time.Duration
		for range 2000 {
			time.Sleep(10 * time.Millisecond) // the build printing a line
			own += 10 * time.Millisecond
			before := time.Now()
			f.Write(line)
			w := time.Since(before)
			if w > maxFeedWait {
				t.Fatalf("one write waited %s, more than %s", w, maxFeedWait)
			}
			waited += w
		}
		if waited == 0 || waited > own {
			t.Fatalf("the writes waited %s in all, for %s of their own", waited, own)
		}
		release()
		if _, dropped := f.Summary(time.Minute); dropped == 0 {
			t.Fatal("no output was dropped while the parser was stuck")
		}
	})
}
