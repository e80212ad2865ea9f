//go:build unix

package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	sdkmcp "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/buildguard/buildguard/harness/fakeagent"
	"github.com/buildguard/buildguard/internal/testsupport/testbin"
)

// safeBuildSession starts the real binary's MCP server in a project whose
// .buildguard.json has a one-second build ("second") and a build that
// prints every line written to fifo ("lines"), against a fake agent, and
// connects the go-sdk client. Progress notifications go to onProgress.
func safeBuildSession(b *testing.B, onProgress func(*sdkmcp.ProgressNotificationParams)) (bin, portFile, dir, fifo string, cs *sdkmcp.ClientSession) {
	b.Helper()
	bin = testbin.Build(b, b.TempDir())
	agent := fakeagent.NewServer(b, fakeagent.WithHeartbeat(-1))
	dir = b.TempDir()
	fifo = filepath.Join(dir, "lines.fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		b.Fatal(err)
	}
	cfg := `{"builds":{"second":{"command":["sleep","1"]},"lines":{"command":["cat",` + strconv.Quote(fifo) + `]}},"defaultBuild":"second"}`
	if err := os.WriteFile(filepath.Join(dir, ".buildguard.json"), []byte(cfg), 0o644); err != nil {
		b.Fatal(err)
	}
	cmd := exec.Command(bin, "mcp", "--port-file", agent.PortFile())
	cmd.Dir = dir
	client := sdkmcp.NewClient(&sdkmcp.Implementation{Name: "bench", Version: "1"}, &sdkmcp.ClientOptions{
		ProgressNotificationHandler: func(_ context.Context, req *sdkmcp.ProgressNotificationClientRequest) {
			onProgress(req.Params)
		},
	})
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	cs, err := client.Connect(ctx, &sdkmcp.CommandTransport{Command: cmd}, nil)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { cs.Close() })
	return bin, agent.PortFile(), dir, fifo, cs
}

// callSafeBuild calls reclazz_safe_build and requires outcome ok.
func callSafeBuild(b *testing.B, cs *sdkmcp.ClientSession, build string, token any) {
	b.Helper()
	p := &sdkmcp.CallToolParams{Name: "reclazz_safe_build", Arguments: map[string]any{"build": build}}
	if token != nil {
		p.SetProgressToken(token)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	res, err := cs.CallTool(ctx, p)
	if err != nil {
		b.Fatal(err)
	}
	raw, _ := json.Marshal(res.StructuredContent)
	if res.IsError || !strings.Contains(string(raw), `"outcome":"ok"`) {
		b.Fatalf("safe build %s: %s", build, raw)
	}
}

// BenchmarkSafeBuildOverhead compares one reclazz_safe_build call of a
// one-second build (sleep 1) with the same build through the wrapper
// (`buildguard -- sleep 1`), both against the fake agent, alternating within
// each iteration. The tool's time is the call as the client sees it
// (hold, build, finish, the search for changed classes); the wrapper's is
// the whole process. It reports the medians and the median of the
// per-pair ratios (target ≤ 1.1, docs/safe-build.md#1).
func BenchmarkSafeBuildOverhead(b *testing.B) {
	bin, portFile, dir, _, cs := safeBuildSession(b, func(*sdkmcp.ProgressNotificationParams) {})
	var wrapper, tool, ratio []float64
	for b.Loop() {
		start := time.Now()
		wrap := exec.Command(bin, "--port-file", portFile, "--owner", "bench", "--", "sleep", "1")
		wrap.Dir = dir // the same project: both take their turn in its build queue
		if out, err := wrap.CombinedOutput(); err != nil {
			b.Fatalf("wrapper: %v\n%s", err, out)
		}
		w := time.Since(start)
		start = time.Now()
		callSafeBuild(b, cs, "second", nil)
		t := time.Since(start)
		wrapper, tool, ratio = append(wrapper, ms(w)), append(tool, ms(t)), append(ratio, float64(t)/float64(w))
	}
	b.ReportMetric(median(wrapper), "wrapper-ms")
	b.ReportMetric(median(tool), "tool-ms")
	b.ReportMetric(median(ratio), "ratio")
}

// BenchmarkSafeBuildProgressLatency measures how long an output line of a
// build takes to reach the client as notifications/progress: the build
// (`cat` of a FIFO) prints each line the benchmark writes, 250 ms apart so
// the rate limit (5 a second) never delays one, and each line carries the
// time it was written. It reports the median and the worst latency (target
// median < 50 ms, docs/safe-build.md#5).
func BenchmarkSafeBuildProgressLatency(b *testing.B) {
	const lines = 12
	var mu sync.Mutex
	var lat []float64
	_, _, _, fifo, cs := safeBuildSession(b, func(p *sdkmcp.ProgressNotificationParams) {
		now := time.Now()
		sent, err := strconv.ParseInt(strings.TrimPrefix(p.Message, "t="), 10, 64)
		if err != nil {
			return
		}
		mu.Lock()
		lat = append(lat, ms(now.Sub(time.Unix(0, sent))))
		mu.Unlock()
	})
	for b.Loop() {
		errc := make(chan error, 1)
		go func() {
			f, err := os.OpenFile(fifo, os.O_WRONLY, 0) // blocks until the build opened it
			if err != nil {
				errc <- err
				return
			}
			defer f.Close()
			for i := 0; i < lines; i++ {
				time.Sleep(250 * time.Millisecond)
				if _, err := fmt.Fprintf(f, "t=%d\n", time.Now().UnixNano()); err != nil {
					errc <- err
					return
				}
			}
			errc <- nil
		}()
		callSafeBuild(b, cs, "lines", "latency")
		if err := <-errc; err != nil {
			b.Fatal(err)
		}
	}
	mu.Lock()
	defer mu.Unlock()
	if len(lat) == 0 {
		b.Fatal("no progress notification arrived")
	}
	worst := 0.0
	for _, l := range lat {
		worst = max(worst, l)
	}
	b.ReportMetric(median(lat), "latency-ms")
	b.ReportMetric(worst, "worst-ms")
	b.ReportMetric(float64(len(lat)), "notifications")
}
