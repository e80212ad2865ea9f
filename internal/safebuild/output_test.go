package safebuild

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"
	"unicode/utf8"
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
			cp := newCapture(&log, nil)
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
	cp := newCapture(nil, nil)
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
		cp := newCapture(nil, nil)
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
