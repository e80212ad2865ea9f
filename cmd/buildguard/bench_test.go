//go:build unix

package main

import (
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/buildguard/buildguard/agentproto/agenttest"
	"github.com/buildguard/buildguard/internal/testbin"
	"github.com/creack/pty"
)

// passthroughBytes is what the passthrough child writes to stdout.
const passthroughBytes = 256 << 20

func median(d []time.Duration) time.Duration {
	d = slices.Clone(d)
	slices.Sort(d)
	return d[len(d)/2]
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

// BenchmarkOverhead compares `buildguard -- true` against the fake agent
// with a bare `true`. The two alternate within each iteration, so both see
// the same machine load; it reports the median of each and the median of
// the per-iteration differences (overhead-ms).
func BenchmarkOverhead(b *testing.B) {
	bin := testbin.Build(b, b.TempDir()) // the real binary, so start-up costs are the product's
	agent := agenttest.NewServer(b, agenttest.WithHeartbeat(-1))
	run := func(argv ...string) time.Duration {
		start := time.Now()
		if out, err := exec.Command(argv[0], argv[1:]...).CombinedOutput(); err != nil {
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
// user's terminal). It reports both throughputs and their ratio.
func BenchmarkPassthrough(b *testing.B) {
	bin := testbin.Build(b, b.TempDir()) // the real binary, so start-up costs are the product's
	agent := agenttest.NewServer(b, agenttest.WithHeartbeat(-1))
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
				start := time.Now()
				var n int64
				if bc.pty {
					n = runUnderPTY(b, argv)
				} else {
					n = runPiped(b, argv)
				}
				if n < passthroughBytes {
					b.Fatalf("read %d bytes, want at least %d", n, passthroughBytes)
				}
				return time.Since(start)
			}
			var direct, wrapped time.Duration
			for b.Loop() {
				direct += run(child)
				wrapped += run(bc.wrapped)
			}
			mbps := func(total time.Duration) float64 {
				return float64(passthroughBytes) * float64(b.N) / total.Seconds() / 1e6
			}
			b.ReportMetric(mbps(direct), "direct-MB/s")
			b.ReportMetric(mbps(wrapped), "wrapped-MB/s")
			b.ReportMetric(direct.Seconds()/wrapped.Seconds(), "ratio")
		})
	}
}

// runPiped runs argv with stdout on a pipe and returns how much it read.
func runPiped(b *testing.B, argv []string) int64 {
	cmd := exec.Command(argv[0], argv[1:]...)
	out, err := cmd.StdoutPipe()
	if err != nil {
		b.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	n, _ := io.Copy(io.Discard, out)
	if err := cmd.Wait(); err != nil {
		b.Fatalf("%v: %v", argv, err)
	}
	return n
}

// runUnderPTY runs argv with stdout and stderr on a pty playing the user's
// terminal and returns how much it read from it.
func runUnderPTY(b *testing.B, argv []string) int64 {
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
	cmd.Stdin, cmd.Stdout, cmd.Stderr = devnull, tty, tty
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	tty.Close()
	buf := make([]byte, 256<<10)
	var n int64
	for {
		m, err := ptmx.Read(buf)
		n += int64(m)
		if err != nil { // EIO once the last writer closed the tty
			break
		}
	}
	if err := cmd.Wait(); err != nil {
		b.Fatalf("%v: %v", argv, err)
	}
	return n
}
