//go:build unix

package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/buildguard/buildguard/harness/fakeagent"
	"github.com/buildguard/buildguard/internal/testsupport/testbin"
	"github.com/buildguard/buildguard/service/safebuild"
)

// BenchmarkTaskHTTP measures the tasks extension over loopback
// (docs/safe-build.md#13) with the server a process of its own, as a host
// meets it: `buildguard mcp --http`, built as released, in a project whose
// build is `true`, against the fake agent in this process. Per iteration:
// from sending a reclazz_safe_build that becomes a task to the answer of
// its first tasks/get (target under 1 ms), that first tasks/get alone,
// from the moment the client holds the task (it meets the build's start on
// the server), the polls until the build
// completed (at least one) and three after it (target under 0.5 ms), and a synchronous
// reclazz_status to the same server and agent. Each request is one POST on
// a keep-alive connection with the 2026-07-28 headers and the token. The
// floor, in the same iterations: one tools/call of go-sdk's stateless
// handler with trivial tools (harness/floor/http), a process of its own,
// after the same 1 ms pause as a poll; ratio-poll is a poll after the
// build against it.
func BenchmarkTaskHTTP(b *testing.B) {
	project := b.TempDir()
	out := filepath.Join(project, "out")
	if err := os.MkdirAll(out, 0o755); err != nil {
		b.Fatal(err)
	}
	cfg, _ := json.Marshal(map[string]any{"builds": map[string]any{"ok": map[string]any{"command": []string{"sh", "-c", "true"}}}, "defaultBuild": "ok"})
	if err := os.WriteFile(filepath.Join(project, safebuild.ConfigFile), cfg, 0o644); err != nil {
		b.Fatal(err)
	}
	fakeagent.NewServer(b, fakeagent.WithHeartbeat(-1),
		fakeagent.WithPortFile(filepath.Join(project, ".reclazz", "agent.port")),
		fakeagent.WithDoctor(fakeagent.Evidence{WatchedDirectories: []string{out}}))
	dir := b.TempDir()
	urlFile := filepath.Join(dir, "url")
	s := startHTTP(b, urlFile, testbin.Build(b, dir), "mcp", "--http", "127.0.0.1:0", "--url-file", urlFile, "--project-dir", project)
	floorURL := filepath.Join(dir, "floor-url")
	floor := startHTTP(b, floorURL, testbin.BuildPackage(b, dir, floorPkg+"http"), floorURL)

	meta := func(tasks bool) string {
		ext := ""
		if tasks {
			ext = `"extensions":{"io.modelcontextprotocol/tasks":{}}`
		}
		return `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{` + ext + `}}`
	}
	id := 0
	call := func(s *httpServer, method, name, params string) map[string]json.RawMessage {
		id++
		req, err := http.NewRequest(http.MethodPost, s.url, strings.NewReader(fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":%q,"params":%s}`, id, method, params)))
		if err != nil {
			b.Fatal(err)
		}
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		req.Header.Set("MCP-Protocol-Version", "2026-07-28")
		req.Header.Set("Mcp-Method", method)
		req.Header.Set("Mcp-Name", name)
		resp, err := s.client.Do(req)
		if err != nil {
			b.Fatal(err)
		}
		defer resp.Body.Close()
		body, err := io.ReadAll(resp.Body)
		var m struct {
			Result map[string]json.RawMessage `json:"result"`
		}
		if err != nil || json.Unmarshal(bytes.TrimSpace(body), &m) != nil || m.Result == nil {
			b.Fatalf("%s: HTTP %d %.300s (%v)", method, resp.StatusCode, body, err)
		}
		return m.Result
	}
	get := func(taskID string) string {
		var status string
		json.Unmarshal(call(s, "tasks/get", taskID, `{"taskId":"`+taskID+`",`+meta(true)+`}`)["status"], &status)
		return status
	}
	var create, createGet, firstGet, poll, idle, status, sdkCall []time.Duration
	for b.Loop() {
		start := time.Now()
		r := call(s, "tools/call", "reclazz_safe_build", `{"name":"reclazz_safe_build","arguments":{},`+meta(true)+`}`)
		create = append(create, time.Since(start))
		var taskID string
		if json.Unmarshal(r["taskId"], &taskID) != nil || taskID == "" {
			b.Fatalf("reclazz_safe_build answered no task: %v", r)
		}
		held := time.Now()
		st := get(taskID)
		createGet = append(createGet, time.Since(start))
		firstGet = append(firstGet, time.Since(held))
		// At least one poll after the first, so that poll is never empty
		// (a build done before it counts as polled once, as over stdio).
		for deadline := time.Now().Add(30 * time.Second); ; {
			if st != "working" && st != "completed" || time.Now().After(deadline) {
				b.Fatalf("task %s: %s", taskID, st)
			}
			time.Sleep(time.Millisecond)
			start = time.Now()
			st = get(taskID)
			poll = append(poll, time.Since(start))
			if st == "completed" {
				break
			}
		}
		for range 3 {
			start = time.Now()
			if st := get(taskID); st != "completed" {
				b.Fatalf("task %s: %s after completed", taskID, st)
			}
			idle = append(idle, time.Since(start))
		}
		start = time.Now()
		if res := call(s, "tools/call", "reclazz_status", `{"name":"reclazz_status","arguments":{},`+meta(false)+`}`); res["structuredContent"] == nil {
			b.Fatalf("reclazz_status answered %v", res)
		}
		status = append(status, time.Since(start))
		// The floor: one request of go-sdk's stateless handler, after
		// the same pause as a poll.
		time.Sleep(time.Millisecond)
		start = time.Now()
		if res := call(floor, "tools/call", "tool_0", `{"name":"tool_0","arguments":{"name":"x"},`+meta(false)+`}`); res["structuredContent"] == nil {
			b.Fatalf("the floor's tool_0 answered %v", res)
		}
		sdkCall = append(sdkCall, time.Since(start))
	}
	us := func(xs []time.Duration) float64 { return float64(median(xs).Nanoseconds()) / 1000 }
	b.ReportMetric(us(create), "create-us")
	b.ReportMetric(us(createGet), "create-get-us")
	b.ReportMetric(us(firstGet), "first-get-us")
	b.ReportMetric(us(poll), "poll-us")
	b.ReportMetric(us(idle), "idle-poll-us")
	b.ReportMetric(us(status), "status-us")
	b.ReportMetric(us(sdkCall), "sdk-call-us")
	b.ReportMetric(us(idle)/us(sdkCall), "ratio-poll")
}
