//go:build unix

package main

import (
	"bytes"
	"cmp"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/buildguard/buildguard/harness/fakeagent"
	"github.com/buildguard/buildguard/internal/testsupport/testbin"
	"github.com/creack/pty"
)

// passthroughBytes is what the passthrough child writes to stdout.
const passthroughBytes = 256 << 20

func median[T cmp.Ordered](xs []T) T {
	xs = slices.Clone(xs)
	slices.Sort(xs)
	return xs[len(xs)/2]
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

// BenchmarkOverhead compares `buildguard -- true` against the fake agent
// with a bare `true`. The two alternate within each iteration, so both see
// the same machine load; it reports the median of each and the median of
// the per-iteration differences (overhead-ms).
func BenchmarkOverhead(b *testing.B) {
	bin := testbin.Build(b, b.TempDir()) // the real binary, so start-up costs are the product's
	agent := fakeagent.NewServer(b, fakeagent.WithHeartbeat(-1))
	project := b.TempDir() // the wrapper's project: its build queue lives there
	run := func(argv ...string) time.Duration {
		start := time.Now()
		cmd := exec.Command(argv[0], argv[1:]...)
		cmd.Dir = project
		if out, err := cmd.CombinedOutput(); err != nil {
			b.Fatalf("%v: %v\n%s", argv, err, out)
		}
		return time.Since(start)
	}
	var direct, wrapped, diff []time.Duration
	for b.Loop() {
		d := run("true")
		w := run(bin, "--port-file", agent.PortFile(), "--owner", "bench", "--", "true")
		direct, wrapped, diff = append(direct, d), append(wrapped, w), append(diff, w-d)
	}
	b.ReportMetric(ms(median(direct)), "direct-ms")
	b.ReportMetric(ms(median(wrapped)), "wrapped-ms")
	b.ReportMetric(ms(median(diff)), "overhead-ms")
}

// BenchmarkPassthrough measures a child writing 256 MiB to stdout, directly
// and through the wrapper, alternating within each iteration: with pipes
// (the wrapper hands over its stdout), with pipes and a transcript (the
// wrapper copies), and under a pty (the wrapper copies from its pty to the
// user's terminal). Throughput is the rate at which the child's output
// arrives, from its first byte to the end: the wrapper's start-up before
// the child runs is BenchmarkOverhead's measure, not this one's. It reports
// the median throughputs and the median of the ratios of each pair, which a
// drift of the machine's speed during the run does not skew.
func BenchmarkPassthrough(b *testing.B) {
	bin := testbin.Build(b, b.TempDir()) // the real binary, so start-up costs are the product's
	agent := fakeagent.NewServer(b, fakeagent.WithHeartbeat(-1))
	child := []string{"head", "-c", strconv.Itoa(passthroughBytes), "/dev/zero"}
	wrap := func(extra ...string) []string {
		argv := append([]string{bin, "--port-file", agent.PortFile(), "--owner", "bench"}, extra...)
		return append(append(argv, "--"), child...)
	}
	transcript := filepath.Join(b.TempDir(), "transcript")
	for _, bc := range []struct {
		name    string
		wrapped []string
		pty     bool
	}{
		{"pipe", wrap(), false},
		{"transcript", wrap("--transcript", transcript), false},
		{"pty", wrap(), true},
	} {
		b.Run(bc.name, func(b *testing.B) {
			run := func(argv []string) time.Duration {
				var n int64
				var flow time.Duration
				if bc.pty {
					n, flow = runUnderPTY(b, argv)
				} else {
					n, flow = runPiped(b, argv)
				}
				if n < passthroughBytes {
					b.Fatalf("read %d bytes, want at least %d", n, passthroughBytes)
				}
				return flow
			}
			var direct, wrapped []time.Duration
			var ratios []float64
			for i := 0; b.Loop(); i++ {
				// Each pair runs in turn in either order, so that neither
				// side always follows the other.
				var d, w time.Duration
				if i%2 == 0 {
					d, w = run(child), run(bc.wrapped)
				} else {
					w, d = run(bc.wrapped), run(child)
				}
				direct, wrapped = append(direct, d), append(wrapped, w)
				ratios = append(ratios, d.Seconds()/w.Seconds())
			}
			mbps := func(d time.Duration) float64 { return float64(passthroughBytes) / d.Seconds() / 1e6 }
			b.ReportMetric(mbps(median(direct)), "direct-MB/s")
			b.ReportMetric(mbps(median(wrapped)), "wrapped-MB/s")
			b.ReportMetric(median(ratios), "ratio")
		})
	}
}

// readOutput reads f to its end and returns how much it read and how long
// the child's output took to arrive: from the first read holding a NUL byte
// (the child writes zeros; the wrapper's own lines are text) to the end. It
// polls without ever sleeping: a reader that blocks is woken on a CPU the
// scheduler picks by what ran before, and a no-op wrapper such as env then
// already measures 0.85-0.93x of the direct rate.
func readOutput(b *testing.B, f *os.File) (int64, time.Duration) {
	rc, err := f.SyscallConn()
	if err != nil {
		b.Fatal(err)
	}
	buf := make([]byte, 256<<10)
	var n int64
	var first time.Time
	err = rc.Control(func(fd uintptr) {
		for {
			m, err := syscall.Read(int(fd), buf)
			if errors.Is(err, syscall.EAGAIN) || errors.Is(err, syscall.EINTR) {
				continue
			}
			if m <= 0 || err != nil { // EOF, or EIO once the last writer closed a tty
				return
			}
			n += int64(m)
			if first.IsZero() && bytes.IndexByte(buf[:m], 0) >= 0 {
				first = time.Now()
			}
		}
	})
	if err != nil {
		b.Fatal(err)
	}
	if first.IsZero() {
		return n, 0
	}
	return n, time.Since(first)
}

// runPiped runs argv with stdout on a pipe and returns what readOutput
// measured.
func runPiped(b *testing.B, argv []string) (int64, time.Duration) {
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Dir = b.TempDir() // the wrapper's project (its build queue), not the source tree
	pr, pw, err := os.Pipe()
	if err != nil {
		b.Fatal(err)
	}
	defer pr.Close()
	cmd.Stdout = pw
	err = cmd.Start()
	pw.Close()
	if err != nil {
		b.Fatal(err)
	}
	n, flow := readOutput(b, pr)
	if err := cmd.Wait(); err != nil {
		b.Fatalf("%v: %v", argv, err)
	}
	return n, flow
}

// runUnderPTY runs argv with stdout and stderr on a pty playing the user's
// terminal and returns what readOutput measured on it.
func runUnderPTY(b *testing.B, argv []string) (int64, time.Duration) {
	ptmx, tty, err := pty.Open()
	if err != nil {
		b.Fatal(err)
	}
	defer ptmx.Close()
	devnull, err := os.Open(os.DevNull)
	if err != nil {
		b.Fatal(err)
	}
	defer devnull.Close()
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Dir = b.TempDir() // the wrapper's project (its build queue), not the source tree
	cmd.Stdin, cmd.Stdout, cmd.Stderr = devnull, tty, tty
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	tty.Close()
	n, flow := readOutput(b, ptmx)
	if err := cmd.Wait(); err != nil {
		b.Fatalf("%v: %v", argv, err)
	}
	return n, flow
}
