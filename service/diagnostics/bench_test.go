package diagnostics

import (
	"bytes"
	"io"
	"maps"
	"os"
	"slices"
	"strings"
	"testing"
	"time"
)

// BenchmarkParse measures the parser's throughput over the whole corpus
// (errors, warnings and ordinary output as builds print them), repeated to
// 8 MiB and fed in 32 KiB writes as a pipe delivers it. Target: at least
// 100 MB/s (docs/safe-build.md#12).
func BenchmarkParse(b *testing.B) {
	var all bytes.Buffer
	for _, e := range loadCorpus(b) {
		all.Write(e.output)
	}
	one := all.Bytes()
	var out bytes.Buffer
	for out.Len() < 8<<20 {
		out.Write(one)
	}
	data := out.Bytes()
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		p := New(Config{Dir: "/home/dev/shop project"})
		for rest := data; len(rest) > 0; {
			n := min(len(rest), 32<<10)
			p.Write(rest[:n])
			rest = rest[n:]
		}
		p.Summary()
	}
}

// BenchmarkCorpusText reports, for each failing build of the corpus, its
// raw output bytes, the bytes of the diagnostics text a failed result leads
// with, and their ratio (target: at least 10× smaller, every error kept).
func BenchmarkCorpusText(b *testing.B) {
	for _, e := range loadCorpus(b) {
		if e.exit == 0 {
			continue
		}
		b.Run(e.name, func(b *testing.B) {
			var text string
			for b.Loop() {
				p := New(Config{Dir: e.dir})
				p.Write(e.output)
				s := p.Summary()
				text = s.Counts() + "\n" + s.Text(4096)
			}
			b.ReportMetric(float64(len(e.output)), "raw-bytes")
			b.ReportMetric(float64(len(text)), "text-bytes")
			b.ReportMetric(float64(len(e.output))/float64(len(text)), "x-smaller")
		})
	}
}

// crafted are lines made to cost the parser the most per byte: separators
// of the located formats repeated across a whole line, names of 8 KiB,
// escape sequences and blanks.
var crafted = map[string]string{
	"kotlin-uri":       "e: file:" + strings.Repeat("a:1", 2700),
	"kotlin-uri-maven": "[ERROR] file:" + strings.Repeat("a:1:", 2000),
	"kotlin-old":       "e: " + strings.Repeat("a: (1, 2", 1000),
	"kotlin-old-maven": "[ERROR] " + strings.Repeat("a: (1", 1600),
	"javac-separators": strings.Repeat("a:1: error: ", 680),
	"maven-positions":  "[ERROR] " + strings.Repeat("x:[1,2", 1350),
	"gradle-glued":     ":" + strings.Repeat("a:", 4000),
	"gradle-task":      "> Task :" + strings.Repeat("a", 8000),
	"escapes":          strings.Repeat("\x1b[1", 2700),
	"blanks":           "/p/A.java:1: error: " + strings.Repeat(" \t", 4000),
}

// craftedOutput is the crafted lines, each once in turn, repeated to n
// bytes.
func craftedOutput(n int) []byte {
	var out bytes.Buffer
	for out.Len() < n {
		for _, name := range slices.Sorted(maps.Keys(crafted)) {
			out.WriteString(crafted[name])
			out.WriteByte('\n')
		}
	}
	return out.Bytes()
}

// BenchmarkParseCrafted measures the parser's throughput over each kind of
// crafted line, 4 MiB of it fed in 32 KiB writes.
func BenchmarkParseCrafted(b *testing.B) {
	for _, name := range slices.Sorted(maps.Keys(crafted)) {
		b.Run(name, func(b *testing.B) {
			var out bytes.Buffer
			for out.Len() < 4<<20 {
				out.WriteString(crafted[name])
				out.WriteByte('\n')
			}
			data := out.Bytes()
			b.SetBytes(int64(len(data)))
			for b.Loop() {
				p := New(Config{Dir: "/p"})
				for rest := data; len(rest) > 0; {
					n := min(len(rest), 32<<10)
					p.Write(rest[:n])
					rest = rest[n:]
				}
				p.Summary()
			}
		})
	}
}

// BenchmarkPipe measures, in the same iterations, a pipe carrying 16 MiB
// of crafted lines (craftedOutput) read in 32 KiB pieces into nothing
// (plain-MB/s) and into a Feed as a build's output is (feed-MB/s), and
// their ratio (slowdown, 1 when the parser never holds the pipe up). The
// share of the output the parser read is parsed-%; the Feed is drained
// after each timed copy.
func BenchmarkPipe(b *testing.B) {
	data := craftedOutput(16 << 20)
	var plain, fed time.Duration
	var dropped int64
	n := 0
	for b.Loop() {
		plain += pipeThrough(b, data, io.Discard)
		f := NewFeed(New(Config{Dir: "/p"}), 0)
		fed += pipeThrough(b, data, f)
		_, d := f.Summary(time.Minute)
		dropped += d
		n++
	}
	mbps := func(d time.Duration) float64 { return float64(n*len(data)) / d.Seconds() / 1e6 }
	b.ReportMetric(mbps(plain), "plain-MB/s")
	b.ReportMetric(mbps(fed), "feed-MB/s")
	b.ReportMetric(fed.Seconds()/plain.Seconds(), "slowdown")
	b.ReportMetric(100-100*float64(dropped)/float64(n*len(data)), "parsed-%")
}

// pipeThrough writes data into an os.Pipe and times until a reader has
// copied all of it into dst in 32 KiB pieces, as a build's pipe is read.
func pipeThrough(b *testing.B, data []byte, dst io.Writer) time.Duration {
	r, w, err := os.Pipe()
	if err != nil {
		b.Fatal(err)
	}
	defer r.Close()
	done := make(chan error, 1)
	go func() {
		_, err := io.CopyBuffer(struct{ io.Writer }{dst}, r, make([]byte, 32<<10))
		done <- err
	}()
	start := time.Now()
	if _, err := w.Write(data); err != nil {
		b.Fatal(err)
	}
	w.Close()
	select {
	case err := <-done:
		if err != nil {
			b.Fatal(err)
		}
	case <-time.After(10 * time.Minute):
		b.Fatal("the pipe's reader did not finish in 10 minutes")
	}
	return time.Since(start)
}
