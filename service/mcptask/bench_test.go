//go:build unix

package mcptask_test

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"io"
	"slices"
	"testing"
	"time"

	"github.com/buildguard/buildguard/harness/mcptest"
	"github.com/buildguard/buildguard/mcp"
	"github.com/buildguard/buildguard/service/mcptask"
	"github.com/buildguard/buildguard/service/tools"
)

// BenchmarkTaskPoll measures the tasks extension over stdio
// (docs/safe-build.md#13): from sending a reclazz_safe_build that becomes a
// task to the answer of its first tasks/get (target under 1 ms), that
// first tasks/get alone, from the moment the client holds the task (it meets
// the build's start), and one tasks/get poll (target under 0.5 ms), next to a synchronous reclazz_status
// call to the same server and agent in the same iterations. The build is
// `true`: it runs between the timed steps, and each iteration waits for it
// (untimed) so builds do not queue.
func BenchmarkTaskPoll(b *testing.B) {
	p := mcptest.NewBuildProject(b, map[string]string{"ok": `true`})
	srv := mcp.NewServer(mcp.Config{Caller: p.Svc, Version: "bench"})
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	done := make(chan error, 1)
	go func() { done <- srv.ServeStdio(context.Background(), inR, outW); outW.Close() }()
	bound := time.AfterFunc(10*time.Minute, func() {
		outR.CloseWithError(errors.New("the benchmark's stdio session is still open after ten minutes"))
	})
	b.Cleanup(func() {
		bound.Stop()
		inW.Close()
		io.Copy(io.Discard, outR)
		<-done
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		_ = srv.Close(ctx)
	})
	answers := bufio.NewReader(outR)
	id := 0
	call := func(method string, params map[string]any) map[string]json.RawMessage {
		id++
		if _, err := io.WriteString(inW, rpc(id, method, params)+"\n"); err != nil {
			b.Fatal(err)
		}
		line, err := answers.ReadString('\n')
		if err != nil {
			b.Fatal(err)
		}
		var m struct {
			Result map[string]json.RawMessage `json:"result"`
		}
		if json.Unmarshal([]byte(line), &m) != nil || m.Result == nil {
			b.Fatalf("%s answered %s", method, line)
		}
		return m.Result
	}
	status := map[string]any{"name": tools.ToolStatus, "arguments": map[string]any{}, "_meta": meta2026(false)}
	var createOnly, createGet, firstGet, poll, sync []float64
	us := func(d time.Duration) float64 { return float64(d.Nanoseconds()) / 1000 }
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		start := time.Now()
		created := call("tools/call", safeBuild(true))
		createOnly = append(createOnly, us(time.Since(start)))
		taskID := str(created["taskId"])
		held := time.Now()
		got := call(mcptask.MethodGet, taskParams(taskID, true))
		createGet = append(createGet, us(time.Since(start)))
		firstGet = append(firstGet, us(time.Since(held)))
		if str(got["taskId"]) != taskID {
			b.Fatalf("tasks/get answered %v", got)
		}
		for deadline := time.Now().Add(30 * time.Second); ; {
			start = time.Now()
			got = call(mcptask.MethodGet, taskParams(taskID, true))
			poll = append(poll, us(time.Since(start)))
			if s := str(got["status"]); s == "completed" {
				break
			} else if s != "working" || time.Now().After(deadline) {
				b.Fatalf("task %s: %v", taskID, got)
			}
			time.Sleep(time.Millisecond)
		}
		start = time.Now()
		if res := call("tools/call", status); res["structuredContent"] == nil {
			b.Fatalf("reclazz_status answered %v", res)
		}
		sync = append(sync, us(time.Since(start)))
	}
	med := func(xs []float64) float64 { slices.Sort(xs); return xs[len(xs)/2] }
	c, pl, s := med(createGet), med(poll), med(sync)
	b.ReportMetric(c, "create-get-us")
	b.ReportMetric(med(createOnly), "create-us")
	b.ReportMetric(med(firstGet), "first-get-us")
	b.ReportMetric(pl, "poll-us")
	b.ReportMetric(s, "status-us")
	b.ReportMetric(c/s, "create-ratio")
	b.ReportMetric(pl/s, "poll-ratio")
}
