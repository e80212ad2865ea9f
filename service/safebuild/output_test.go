package safebuild

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"testing/synctest"
	"time"
	"unicode/utf8"

	"github.com/buildguard/buildguard/service/diagnostics"
)

func TestCaptureTail(t *testing.T) {
	t.Parallel()
	long := strings.Repeat("y", 3*TailBytes)
	cases := []struct {
		name      string
		writes    []string
		tail      string
		lines     int
		truncated bool
	}{
		{"empty", nil, "", 0, false},
		{"two lines", []string{"a\nb", "\n"}, "a\nb\n", 2, false},
		{"partial last line", []string{"a\nb"}, "a\nb", 2, false},
		{"101 lines", []string{strings.Repeat("l\n", 101)}, strings.Repeat("l\n", 100), 101, true},
		{"one long line", []string{long}, long[:TailBytes], 1, true},
		{"long line then short", []string{long + "\n", "end\n"}, "end\n", 2, true},
		{"invalid utf-8", []string{"a\xffb\n"}, "a\uFFFDb\n", 1, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var log bytes.Buffer
			cp := newCapture(&log, 0, nil)
			for _, w := range c.writes {
				cp.Write([]byte(w))
			}
			if err := cp.flush(); err != nil {
				t.Fatal(err)
			}
			tail, lines, truncated := cp.summary()
			if tail != c.tail || lines != c.lines || truncated != c.truncated {
				t.Errorf("summary = %.40q, %d, %v; want %.40q, %d, %v", tail, lines, truncated, c.tail, c.lines, c.truncated)
			}
			if log.String() != strings.Join(c.writes, "") {
				t.Error("the log is not the whole output")
			}
		})
	}
}

// TestCaptureRingWraps writes in odd-sized chunks so the ring wraps in the
// middle of a write, and compares the tail with the end of the output.
func TestCaptureRingWraps(t *testing.T) {
	t.Parallel()
	var all bytes.Buffer
	cp := newCapture(nil, 0, nil)
	for i := 0; all.Len() < 5*TailBytes; i++ {
		chunk := []byte(fmt.Sprintf("%05d %s\n", i, strings.Repeat("z", i%300)))
		all.Write(chunk)
		cp.Write(chunk)
	}
	tail, lines, truncated := cp.summary()
	if !truncated || lines != bytes.Count(all.Bytes(), []byte("\n")) || !strings.HasSuffix(all.String(), tail) {
		t.Fatalf("tail is not the end of the output (%d lines, truncated %v)", lines, truncated)
	}
	if len(tail) > TailBytes || strings.Count(tail, "\n") > TailLines {
		t.Errorf("tail of %d bytes and %d lines", len(tail), strings.Count(tail, "\n"))
	}
}

// The capture costs no work per line beyond finding its end (the latest
// line becomes a progress message only when progress is read): writing
// a thousand lines allocates nothing, and progress still counts every line
// and gives the last completed one (docs/safe-build.md#5).
func TestCaptureCostsNoAllocationPerLine(t *testing.T) {
	cp := newCapture(io.Discard, 0, func() {})
	chunk := append(bytes.Repeat([]byte("[javac] Compiling Äpfel.java\n"), 1000), "partial"...)
	cp.Write(chunk) // the line buffers grow once
	writes := 1
	allocs := testing.AllocsPerRun(20, func() {
		cp.Write(chunk)
		writes++
	})
	if allocs >= 1 {
		t.Fatalf("a write of 1000 lines allocated %.0f times", allocs)
	}
	lines, msg := cp.progress()
	if lines != 1000*writes || msg != "[javac] Compiling Äpfel.java" {
		t.Fatalf("progress %d lines, %q; want %d lines", lines, msg, 1000*writes)
	}
	cp.Write([]byte(" end\r\nnext"))
	if lines, msg = cp.progress(); lines != 1000*writes+1 || msg != "partial end" {
		t.Fatalf("progress %d lines, %q after a line written across two writes", lines, msg)
	}
}

func TestMessageCut(t *testing.T) {
	t.Parallel()
	if got := message([]byte(strings.Repeat("ş", 250) + "\r")); utf8.RuneCountInString(got) != MessageChars || !utf8.ValidString(got) {
		t.Errorf("message of %d characters", utf8.RuneCountInString(got))
	}
	if got := message([]byte("BUILD SUCCESSFUL\r")); got != "BUILD SUCCESSFUL" {
		t.Errorf("message %q", got)
	}
}

// TestLimiter runs on a fake clock: the first line is reported at once,
// later ones at most once per interval, each report with more lines than
// the last, and none after close.
func TestLimiter(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		type report struct {
			at    time.Duration
			lines int
			msg   string
		}
		var mu sync.Mutex
		var got []report
		start := time.Now()
		cp := newCapture(nil, 0, nil)
		l := newLimiter(func(lines int, msg string) {
			mu.Lock()
			got = append(got, report{time.Since(start), lines, msg})
			mu.Unlock()
		}, cp.progress, ProgressInterval)
		cp.onLine = l.line

		cp.Write([]byte("first\n"))
		synctest.Wait()
		for i := range 30 { // a line every 20 ms for 600 ms
			time.Sleep(20 * time.Millisecond)
			cp.Write([]byte(fmt.Sprintf("line %d\n", i)))
		}
		time.Sleep(time.Second)
		cp.Write([]byte("partial"))
		time.Sleep(time.Second)
		l.close()
		cp.Write([]byte(" end\n"))
		synctest.Wait()

		mu.Lock()
		defer mu.Unlock()
		if len(got) == 0 || got[0] != (report{0, 1, "first"}) {
			t.Fatalf("first report %+v, want the first line at once", got)
		}
		for i := 1; i < len(got); i++ {
			if got[i].at-got[i-1].at < ProgressInterval {
				t.Errorf("reports %d and %d are %v apart", i-1, i, got[i].at-got[i-1].at)
			}
			if got[i].lines <= got[i-1].lines {
				t.Errorf("report %d: %d lines after %d", i, got[i].lines, got[i-1].lines)
			}
		}
		if last := got[len(got)-1]; last.lines != 31 || last.msg != "line 29" {
			t.Errorf("last report %+v, want all 31 lines", last)
		}
		if n := len(got); n > 5 {
			t.Errorf("%d reports in 0.8 s", n)
		}
	})
}

func TestLogRotationKeepsTheNewest(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	other := filepath.Join(LogDir(dir), "notes.txt")
	base := time.Date(2026, 12, 2, 1, 0, 0, 0, time.UTC)
	var names []string
	for i := range KeptLogs + 3 {
		f, err := createLog(dir, "gradle", base.Add(time.Duration(i)*time.Second))
		if err != nil {
			t.Fatal(err)
		}
		names = append(names, filepath.Base(f.Name()))
		f.Close()
		if i == 0 {
			os.WriteFile(other, nil, 0o644)
		}
	}
	entries, _ := os.ReadDir(LogDir(dir))
	var left []string
	for _, e := range entries {
		left = append(left, e.Name())
	}
	want := append(append([]string(nil), names[3:]...), "notes.txt")
	if strings.Join(left, " ") != strings.Join(want, " ") {
		t.Errorf("logs left %v, want %v", left, want)
	}
	if names[0] != "20261202T010000000Z-gradle.log" {
		t.Errorf("log name %q", names[0])
	}
	// Two builds in the same millisecond get distinct logs, and a clock
	// gone back never removes the log just created.
	a, _ := createLog(dir, "x", base.Add(-time.Hour))
	b, err := createLog(dir, "x", base.Add(-time.Hour))
	if _, serr := os.Stat(b.Name()); serr != nil || err != nil || a.Name() == b.Name() {
		t.Errorf("same-time logs %v %v (%v)", a.Name(), b.Name(), err)
	}
	a.Close()
	b.Close()
}

// The log on disk stops at its cap, ends with a line saying it was cut, and
// the output goes on being counted and kept for the tail
// (docs/safe-build.md#9).
func TestCaptureCutsTheLogAtItsCap(t *testing.T) {
	t.Parallel()
	var log bytes.Buffer
	cp := newCapture(&log, 1000, nil)
	for i := range 300 {
		fmt.Fprintf(cp, "line %03d\n", i) // 9 bytes each, 2700 in all
	}
	if err := cp.flush(); err != nil {
		t.Fatal(err)
	}
	body, note, ok := strings.Cut(log.String(), "\n[buildguard: the log was cut at 1000 bytes; the build printed 2700 bytes in all")
	if !ok || len(body) != 1000 || !strings.HasSuffix(note, "]\n") {
		t.Fatalf("log of %d bytes: %q", log.Len(), log.String()[max(0, log.Len()-200):])
	}
	tail, lines, _ := cp.summary()
	if lines != 300 || !strings.HasSuffix(tail, "line 299\n") {
		t.Errorf("lines %d, tail ends %q", lines, tail[max(0, len(tail)-20):])
	}
	if n := cp.logNote(); !strings.Contains(n, "the log was cut at 1000 bytes") || !strings.Contains(n, "first 1000 of the 2700 bytes") {
		t.Errorf("note %q", n)
	}
}

// The capture hands its output to the parser through a Feed, never
// waiting for it (docs/safe-build.md#12): what the parser found comes back,
// and output the Feed could not hold is named in the result's detail.
func TestCaptureParsesOffThePipe(t *testing.T) {
	t.Parallel()
	var log bytes.Buffer
	cp := newCapture(&log, 0, nil)
	cp.parser = diagnostics.New(diagnostics.Config{Dir: "/p"})
	cp.Write([]byte("/p/B.java:3: error: cannot find symbol\n"))
	cp.Write(bytes.Repeat([]byte("x\n"), diagnostics.DefaultFeedBytes)) // more than the Feed holds
	cp.Write([]byte("/p/C.java:4: error: after\n"))
	if cp.feed == nil {
		t.Fatal("the output went to the parser on the pipe's path")
	}
	s := cp.diagnostics()
	if len(s.Diagnostics) != 2 || s.Diagnostics[0].File != "B.java" || s.Diagnostics[1].File != "C.java" {
		t.Fatalf("diagnostics %v", s.Diagnostics)
	}
	want := fmt.Sprintf("; %d bytes of the output were not read for diagnostics", 2*diagnostics.DefaultFeedBytes)
	if n := cp.logNote(); !strings.HasPrefix(n, want) {
		t.Fatalf("note %q, want it to start %q", n, want)
	}
}

// fullDisk accepts limit bytes, then fails as a full disk does.
type fullDisk struct{ limit int }

func (d *fullDisk) Write(p []byte) (int, error) {
	if len(p) > d.limit {
		n := d.limit
		d.limit = 0
		return n, syscall.ENOSPC
	}
	d.limit -= len(p)
	return len(p), nil
}

// A log that cannot be written (a full disk) is reported incomplete, never
// as complete, and the build's output is still counted.
func TestCaptureSaysTheLogIsIncompleteOnAWriteError(t *testing.T) {
	t.Parallel()
	cp := newCapture(&fullDisk{limit: 100 << 10}, 0, nil)
	chunk := bytes.Repeat([]byte("0123456789abcde\n"), 4096) // 64 KiB
	for range 4 {
		cp.Write(chunk)
	}
	if err := cp.flush(); !errors.Is(err, syscall.ENOSPC) {
		t.Fatalf("flush: %v, want the disk's error", err)
	}
	if n := cp.logNote(); !strings.Contains(n, "the log is incomplete") || !strings.Contains(n, "no space left") {
		t.Errorf("note %q", n)
	}
	if _, lines, _ := cp.summary(); lines != 4*4096 {
		t.Errorf("lines %d", lines)
	}
}
