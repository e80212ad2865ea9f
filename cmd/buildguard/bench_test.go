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
	"github.com/creack/pty"
)

// passthroughBytes is what the passthrough child writes to stdout.
const passthroughBytes = 256 << 20

// buildBinary builds the real buildguard binary (not the test binary) once
// per benchmark, so start-up costs are the product's.
func buildBinary(b *testing.B) string {
	b.Helper()
	bin := filepath.Join(b.TempDir(), "buildguard")
	out, err := exec.Command("go", "build", "-o", bin, "github.com/buildguard/buildguard/cmd/buildguard").CombinedOutput()
	if err != nil {
		b.Fatalf("go build: %v\n%s", err, out)
	}
	return bin
}

// reportMedian reports the median of the per-run durations as median-ms.
func reportMedian(b *testing.B, d []time.Duration) {
	if len(d) == 0 {
		return
	}
	slices.Sort(d)
	b.ReportMetric(float64(d[len(d)/2].Microseconds())/1000, "median-ms")
}

// BenchmarkOverhead compares `buildguard -- true` against the fake agent
// with a bare `true`: the median difference is the wrapper's overhead.
func BenchmarkOverhead(b *testing.B) {
	bin := buildBinary(b)
	agent := agenttest.NewServer(b, agenttest.WithHeartbeat(-1))
	for _, bc := range []struct {
		name string
		argv []string
	}{
		{"direct", []string{"true"}},
		{"wrapped", []string{bin, "--port-file", agent.PortFile(), "--owner", "bench", "--", "true"}},
	} {
		b.Run(bc.name, func(b *testing.B) {
			var runs []time.Duration
			for b.Loop() {
				start := time.Now()
				cmd := exec.Command(bc.argv[0], bc.argv[1:]...)
				if out, err := cmd.CombinedOutput(); err != nil {
					b.Fatalf("%v: %v\n%s", bc.argv, err, out)
				}
				runs = append(runs, time.Since(start))
			}
			reportMedian(b, runs)
		})
	}
}

// BenchmarkPassthrough measures the throughput of a child writing 256 MiB to
// stdout, directly and through the wrapper: with pipes (the wrapper hands
// over its stdout), with pipes and a transcript (the wrapper copies), and
// under a pty (the wrapper copies from its pty to the user's terminal).
func BenchmarkPassthrough(b *testing.B) {
	bin := buildBinary(b)
	agent := agenttest.NewServer(b, agenttest.WithHeartbeat(-1))
	child := []string{"head", "-c", strconv.Itoa(passthroughBytes), "/dev/zero"}
	wrap := func(extra ...string) []string {
		argv := append([]string{bin, "--port-file", agent.PortFile(), "--owner", "bench"}, extra...)
		return append(append(argv, "--"), child...)
	}
	transcript := filepath.Join(b.TempDir(), "transcript")
	cases := []struct {
		name string
		argv []string
		pty  bool
	}{
		{"pipe-direct", child, false},
		{"pipe-wrapped", wrap(), false},
		{"pipe-transcript", wrap("--transcript", transcript), false},
		{"pty-direct", child, true},
		{"pty-wrapped", wrap(), true},
	}
	for _, bc := range cases {
		b.Run(bc.name, func(b *testing.B) {
			b.SetBytes(passthroughBytes)
			for b.Loop() {
				var n int64
				if bc.pty {
					n = runUnderPTY(b, bc.argv)
				} else {
					n = runPiped(b, bc.argv)
				}
				if n < passthroughBytes {
					b.Fatalf("read %d bytes, want at least %d", n, passthroughBytes)
				}
			}
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
