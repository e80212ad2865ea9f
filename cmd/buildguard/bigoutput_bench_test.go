//go:build linux

package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	sdkmcp "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/buildguard/buildguard/harness/fakeagent"
	"github.com/buildguard/buildguard/internal/testsupport/testbin"
)

// bigChunk is the size of the generated output file; a build prints it
// over and over to reach its size.
const bigChunk = 64 << 20

// bigChunks writes n files of bigChunk bytes of build output each into
// dir: Gradle task lines, javac compiling notes, every 613 and 619 lines a
// warning, and an error with its source line, caret and detail lines
// (each naming a file of its own, in each file another), and every 997
// lines a line of 8 KiB (a long classpath). It returns their paths and the
// errors and warnings each holds.
func bigChunks(b *testing.B, dir string, n int) (paths []string, errs, warns int) {
	b.Helper()
	var out bytes.Buffer
	long := "[DEBUG] classpath: " + strings.Repeat("/home/dev/.m2/repository/org/example/lib/1.0/lib-1.0.jar:", 140) + "\n"
	for n := 0; out.Len() < bigChunk; n++ {
		switch {
		case n%997 == 0:
			out.WriteString(long)
		case n%613 == 0:
			fmt.Fprintf(&out, "/home/dev/shop/src/main/java/com/example/shop@@/W%d.java:%d: warning: [deprecation] parse(String) in Money has been deprecated\n", n, n%500+1)
			warns++
		case n%619 == 0:
			fmt.Fprintf(&out, "/home/dev/shop/src/main/java/com/example/shop@@/E%d.java:%d: error: cannot find symbol\n        total = price.add(taxFor%d(order));\n                          ^\n  symbol:   method taxFor%d(Order)\n  location: class E%d\n", n, n%500+1, n, n, n)
			errs++
		case n%7 == 0:
			fmt.Fprintf(&out, "> Task :shop-module-%d:compileJava\n", n%40)
		default:
			fmt.Fprintf(&out, "[javac] Compiling com/example/shop/orders/OrderLine%d.java to /home/dev/shop/build/classes/java/main\n", n)
		}
	}
	if bytes.HasSuffix(out.Bytes()[:bigChunk], []byte("@")) || bytes.Count(out.Bytes()[bigChunk:], []byte(": error: ")) > 0 {
		b.Fatal("the generated output's end cuts an error")
	}
	out.Truncate(bigChunk)
	for i := range n {
		path := filepath.Join(dir, fmt.Sprintf("output%02d.txt", i))
		if err := os.WriteFile(path, bytes.ReplaceAll(out.Bytes(), []byte("@@"), fmt.Appendf(nil, "%02d", i)), 0o644); err != nil {
			b.Fatal(err)
		}
		paths = append(paths, path)
	}
	return paths, errs, warns
}

// bigProject writes a project whose build "big" prints the chunks (cat),
// with a log cap above its output.
func bigProject(b *testing.B, dir string, chunks []string) {
	b.Helper()
	raw, _ := json.Marshal(append([]string{"cat"}, chunks...))
	cfg := `{"maxLogMiB": 4096, "builds": {"big": {"command": ` + string(raw) + `}}}`
	if err := os.WriteFile(filepath.Join(dir, ".buildguard.json"), []byte(cfg), 0o644); err != nil {
		b.Fatal(err)
	}
}

// bigRun is one run of the big build.
type bigRun struct {
	wall    time.Duration
	peakKiB float64 // GNU time's %M: wait4's ru_maxrss of buildguard
	result  string  // the structured result, as JSON
	notes   int     // progress notifications the client received (MCP)
}

// timeBin is GNU time, or the benchmark is skipped.
func timeBin(b *testing.B) string {
	b.Helper()
	t, err := exec.LookPath("time")
	if err != nil {
		b.Skip("GNU time is not installed")
	}
	return t
}

// peakOf reads GNU time's %M (KiB) from its output file.
func peakOf(b *testing.B, file string) float64 {
	b.Helper()
	raw, err := os.ReadFile(file)
	if err != nil {
		b.Fatalf("GNU time wrote no peak: %v", err)
	}
	lines := strings.Split(strings.TrimSpace(string(raw)), "\n")
	v, err := strconv.ParseFloat(lines[len(lines)-1], 64)
	if err != nil {
		b.Fatalf("GNU time's peak: %v in %q", err, raw)
	}
	return v
}

// floorRun times the build's command alone, its output to a file, and
// removes the file.
func floorRun(b *testing.B, dir string, chunks []string) time.Duration {
	b.Helper()
	out, err := os.Create(filepath.Join(dir, "floor.out"))
	if err != nil {
		b.Fatal(err)
	}
	defer os.Remove(out.Name())
	defer out.Close()
	cmd := exec.Command("cat", chunks...)
	cmd.Stdout = out
	syscall.Sync()
	start := time.Now()
	if err := cmd.Run(); err != nil {
		b.Fatal(err)
	}
	return time.Since(start)
}

// buildRunBig runs `buildguard build run big` under GNU time.
func buildRunBig(b *testing.B, timeCmd, bin, dir string) bigRun {
	b.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	rss := filepath.Join(b.TempDir(), "rss")
	cmd := exec.CommandContext(ctx, timeCmd, "-f", "%M", "-o", rss, bin, "build", "run", "big")
	cmd.Dir = dir
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	syscall.Sync()
	start := time.Now()
	err := cmd.Run()
	wall := time.Since(start)
	if err != nil {
		b.Fatalf("build run: %v\n%s", err, stderr.Bytes()[max(0, stderr.Len()-4096):])
	}
	return bigRun{wall: wall, peakKiB: peakOf(b, rss), result: stdout.String()}
}

// mcpBig starts `buildguard mcp` under GNU time, calls reclazz_safe_build
// of the big build once with a progress token, as hosts do, and stops the
// server: the peak is the server's for the whole session.
func mcpBig(b *testing.B, timeCmd, bin, dir, portFile string) bigRun {
	b.Helper()
	rss := filepath.Join(b.TempDir(), "rss")
	cmd := exec.Command(timeCmd, "-f", "%M", "-o", rss, bin, "mcp", "--port-file", portFile)
	cmd.Dir = dir
	var notes atomic.Int64
	client := sdkmcp.NewClient(&sdkmcp.Implementation{Name: "bench", Version: "1"}, &sdkmcp.ClientOptions{
		ProgressNotificationHandler: func(context.Context, *sdkmcp.ProgressNotificationClientRequest) {
			notes.Add(1)
		},
	})
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	cs, err := client.Connect(ctx, &sdkmcp.CommandTransport{Command: cmd}, nil)
	if err != nil {
		b.Fatal(err)
	}
	p := &sdkmcp.CallToolParams{Name: "reclazz_safe_build", Arguments: map[string]any{"build": "big"}}
	p.SetProgressToken("big")
	syscall.Sync()
	start := time.Now()
	res, err := cs.CallTool(ctx, p)
	wall := time.Since(start)
	if cerr := cs.Close(); err == nil && cerr != nil {
		err = cerr
	}
	if err != nil {
		b.Fatal(err)
	}
	raw, _ := json.Marshal(res.StructuredContent)
	return bigRun{wall: wall, peakKiB: peakOf(b, rss), result: string(raw), notes: int(notes.Load())}
}

// checkBig requires the result to say ok, with every error and warning
// counted, every line and the whole log, and removes the log.
func checkBig(b *testing.B, r bigRun, times, errs, warns int) {
	b.Helper()
	var res struct {
		Outcome  string
		Errors   int
		Warnings int
		Detail   string
		Output   struct {
			LogFile string
			Lines   int
		}
	}
	if err := json.Unmarshal([]byte(r.result), &res); err != nil {
		b.Fatalf("result: %v: %q", err, r.result)
	}
	defer os.Remove(res.Output.LogFile)
	if res.Outcome != "ok" || res.Errors != times*errs || res.Warnings != times*warns {
		b.Fatalf("want outcome ok, %d errors and %d warnings; got %s, %d and %d: %s",
			times*errs, times*warns, res.Outcome, res.Errors, res.Warnings, res.Detail)
	}
	st, err := os.Stat(res.Output.LogFile)
	if err != nil || st.Size() != int64(times)*bigChunk {
		b.Fatalf("the log %s: %v, want %d bytes", res.Output.LogFile, err, int64(times)*bigChunk)
	}
}

// BenchmarkBigOutput measures a build that prints its output as fast as
// it can (cat of 64 MiB of generated javac and Gradle output, long lines
// and errors among them) through `buildguard build run` (run) and through
// reclazz_safe_build over stdio with a go-sdk client that asks for
// progress (mcp), at 64 MiB and 1 GiB, against the floor of the same
// command with its output to a file, alternating within each iteration.
// Each run's result must count every error and warning and its log hold
// every byte. It reports buildguard's MB/s, the floor's, their ratio of
// times (median of the pairs) and buildguard's peak RSS (GNU time's
// maxrss; the server's for its whole session over MCP) and, over MCP, the
// progress notifications the client received. Targets: ≥ 200 MB/s at
// 1 GiB, and memory flat: the peak at 1 GiB at most 8 MiB above the peak
// at 64 MiB, the diagnostics' queue (4 MiB) twice over for the garbage
// collector's room (docs/performance.md#5.6).
func BenchmarkBigOutput(b *testing.B) {
	timeCmd := timeBin(b)
	bin := testbin.Build(b, b.TempDir())
	chunks, errs, warns := bigChunks(b, b.TempDir(), 16)
	for _, front := range []string{"run", "mcp"} {
		for _, size := range []struct {
			name  string
			times int
		}{{"64MiB", 1}, {"1GiB", 16}} {
			b.Run(front+"/"+size.name, func(b *testing.B) {
				dir := b.TempDir()
				bigProject(b, dir, chunks[:size.times])
				agent := fakeagent.NewServer(b, fakeagent.WithHeartbeat(-1),
					fakeagent.WithPortFile(filepath.Join(dir, ".reclazz", "agent.port")))
				var ours, floor, ratio, peak, notes []float64
				for b.Loop() {
					f := floorRun(b, dir, chunks[:size.times])
					var r bigRun
					if front == "run" {
						r = buildRunBig(b, timeCmd, bin, dir)
					} else {
						r = mcpBig(b, timeCmd, bin, dir, agent.PortFile())
					}
					checkBig(b, r, size.times, errs, warns)
					ours, floor = append(ours, r.wall.Seconds()), append(floor, f.Seconds())
					ratio, peak = append(ratio, r.wall.Seconds()/f.Seconds()), append(peak, r.peakKiB/1024)
					notes = append(notes, float64(r.notes))
				}
				bytes := float64(size.times) * bigChunk / 1e6
				b.ReportMetric(bytes/median(ours), "MB/s")
				b.ReportMetric(bytes/median(floor), "floor-MB/s")
				b.ReportMetric(median(ratio), "ratio")
				b.ReportMetric(slicesMax(peak), "peak-MiB")
				if front == "mcp" {
					b.ReportMetric(median(notes), "progress")
				}
			})
		}
	}
}

func slicesMax(xs []float64) float64 {
	m := 0.0
	for _, x := range xs {
		m = max(m, x)
	}
	return m
}
