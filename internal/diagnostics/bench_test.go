package diagnostics

import (
	"bytes"
	"testing"
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
