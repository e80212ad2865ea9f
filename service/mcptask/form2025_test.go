//go:build unix

package mcptask_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/buildguard/buildguard/harness/mcptest"
	"github.com/buildguard/buildguard/internal/testsupport/wait"
	"github.com/buildguard/buildguard/mcp"
	"github.com/buildguard/buildguard/mcp/httpfront"
	"github.com/buildguard/buildguard/service/mcptask"
	"github.com/buildguard/buildguard/service/tools"
)

// The 2025-11-25 form of tasks (SEP-1686, docs/decisions.md#D17) on the
// real server, spoken as raw JSON-RPC from the specification.

// answer is one JSON-RPC answer: its result, or its error's code and
// message.
type answer struct {
	result  fields
	code    int64
	message string
}

// fields are a JSON object's members; they print as JSON.
type fields map[string]json.RawMessage

func (f fields) String() string {
	b, _ := json.Marshal(map[string]json.RawMessage(f))
	return string(b)
}

// client2025 speaks one session of version to a server: requests may be in
// flight together (a tasks/result waits while tasks/get is answered).
type client2025 interface {
	// send starts a request; its answer arrives on the channel.
	send(method string, params map[string]any) <-chan answer
}

// call sends a request and waits at most 30 s for its answer.
func call(t *testing.T, c client2025, method string, params map[string]any) answer {
	t.Helper()
	select {
	case a := <-c.send(method, params):
		return a
	case <-time.After(30 * time.Second):
		t.Fatalf("no answer to %s within 30 s", method)
		return answer{}
	}
}

// stdio2025 is a stdio session with a reader that routes answers by id and
// a writer that sends the lines in order without holding up the test (a
// server that stops reading blocks only the writer).
type stdio2025 struct {
	t       *testing.T
	lines   chan string
	mu      sync.Mutex
	id      int
	waiting map[string]chan answer
}

// newStdio2025 starts a stdio session of srv.
func newStdio2025(t *testing.T, srv *mcp.Server) *stdio2025 {
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	s := &stdio2025{t: t, lines: make(chan string, 64), waiting: map[string]chan answer{}}
	go func() {
		_ = srv.ServeStdio(context.Background(), inR, outW)
		outW.Close()
	}()
	go s.read(bufio.NewReader(outR))
	go func() {
		for line := range s.lines {
			if _, err := io.WriteString(inW, line); err != nil {
				return
			}
		}
	}()
	t.Cleanup(func() {
		inW.Close()
		close(s.lines)
	})
	return s
}

// openStdio2025 starts a stdio session of srv and initializes it at version.
func openStdio2025(t *testing.T, srv *mcp.Server, version string) *stdio2025 {
	t.Helper()
	s := newStdio2025(t, srv)
	if a := call(t, s, "initialize", map[string]any{"protocolVersion": version}); a.code != 0 {
		t.Fatalf("initialize: error %d %s", a.code, a.message)
	}
	return s
}

func (s *stdio2025) read(out *bufio.Reader) {
	for {
		line, err := out.ReadBytes('\n')
		if err != nil {
			return
		}
		var m struct {
			ID json.RawMessage `json:"id"`
		}
		if json.Unmarshal(line, &m) != nil {
			continue
		}
		s.mu.Lock()
		ch := s.waiting[string(m.ID)]
		delete(s.waiting, string(m.ID))
		s.mu.Unlock()
		if ch != nil {
			ch <- decode(line)
		}
	}
}

func (s *stdio2025) send(method string, params map[string]any) <-chan answer {
	ch := make(chan answer, 1)
	s.mu.Lock()
	s.id++
	id := s.id
	s.waiting[fmt.Sprint(id)] = ch
	s.mu.Unlock()
	s.lines <- rpc2025(id, method, params) + "\n"
	return ch
}

// http2025 posts each request on its own with a version's header, as a
// client of that revision does after initialize.
type http2025 struct {
	t       *testing.T
	url     string
	version string
	mu      sync.Mutex
	id      int
	session string // the Mcp-Session-Id initialize gave, sent from then on
}

func (h *http2025) send(method string, params map[string]any) <-chan answer {
	ch := make(chan answer, 1)
	h.mu.Lock()
	h.id++
	body := rpc2025(h.id, method, params)
	session := h.session
	h.mu.Unlock()
	go func() {
		req, _ := http.NewRequest(http.MethodPost, h.url, strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		req.Header.Set("MCP-Protocol-Version", h.version)
		req.Header.Set("Authorization", "Bearer "+testToken)
		if session != "" {
			req.Header.Set("Mcp-Session-Id", session)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
		defer cancel()
		resp, err := http.DefaultClient.Do(req.WithContext(ctx))
		if err != nil {
			ch <- answer{code: -1, message: err.Error()}
			return
		}
		defer resp.Body.Close()
		if method == "initialize" {
			h.mu.Lock()
			h.session = resp.Header.Get("Mcp-Session-Id")
			h.mu.Unlock()
		}
		b, _ := io.ReadAll(resp.Body)
		ch <- decode(sseData(bytes.TrimSpace(b)))
	}()
	return ch
}

// sseData is the JSON of an answer, whether it came as JSON or as the data
// line of an event stream.
func sseData(b []byte) []byte {
	for line := range bytes.SplitSeq(b, []byte("\n")) {
		if d, ok := bytes.CutPrefix(line, []byte("data: ")); ok {
			return d
		}
	}
	return b
}

// rpc2025 is a JSON-RPC request line; nil params are left out.
func rpc2025(id int, method string, params map[string]any) string {
	m := map[string]any{"jsonrpc": "2.0", "id": id, "method": method}
	if params != nil {
		m["params"] = params
	}
	b, _ := json.Marshal(m)
	return string(b)
}

func decode(line []byte) answer {
	var m struct {
		Result fields `json:"result"`
		Error  *struct {
			Code    int64  `json:"code"`
			Message string `json:"message"`
		} `json:"error"`
	}
	if err := json.Unmarshal(line, &m); err != nil {
		return answer{code: -1, message: fmt.Sprintf("undecodable answer %q", line)}
	}
	if m.Error != nil {
		return answer{code: m.Error.Code, message: m.Error.Message}
	}
	return answer{result: m.Result}
}

// open2025 is a 2025-11-25 session of a new server over transport, and the
// server.
func open2025(t *testing.T, caller mcp.Caller, transport string) (client2025, *mcp.Server) {
	t.Helper()
	if transport == "stdio" {
		srv := mcp.NewServer(mcp.Config{Caller: caller, Version: "test"})
		t.Cleanup(func() { closeServer(srv) })
		return openStdio2025(t, srv, "2025-11-25"), srv
	}
	srv, h := startHTTPTasks(t, caller)
	c := &http2025{t: t, url: h.url, version: "2025-11-25"}
	if a := call(t, c, "initialize", map[string]any{"protocolVersion": "2025-11-25"}); a.code != 0 {
		t.Fatalf("initialize: error %d %s", a.code, a.message)
	}
	return c, srv
}

func closeServer(srv *mcp.Server) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	_ = srv.Close(ctx)
}

// task2025 is a 2025-11-25 Task.
type task2025 struct {
	TaskID        string `json:"taskId"`
	Status        string `json:"status"`
	StatusMessage string `json:"statusMessage"`
	CreatedAt     string `json:"createdAt"`
	LastUpdatedAt string `json:"lastUpdatedAt"`
	TTL           *int64 `json:"ttl"`
	PollInterval  *int64 `json:"pollInterval"`
}

// asTask decodes a tasks/get or tasks/cancel result, and checks it holds
// the Task's fields and nothing else but _meta.
func asTask(t *testing.T, what string, res map[string]json.RawMessage) task2025 {
	t.Helper()
	raw, _ := json.Marshal(res)
	var task task2025
	if err := json.Unmarshal(raw, &task); err != nil {
		t.Fatalf("%s: %s: %v", what, raw, err)
	}
	for k := range res {
		switch k {
		case "taskId", "status", "statusMessage", "createdAt", "lastUpdatedAt", "ttl", "pollInterval", "_meta":
		default:
			t.Errorf("%s has %q, which a Task has not: %s", what, k, raw)
		}
	}
	if task.TaskID == "" || task.CreatedAt == "" || task.LastUpdatedAt == "" || task.TTL == nil || *task.TTL < (10*time.Minute).Milliseconds() {
		t.Errorf("%s lacks a Task's taskId, createdAt, lastUpdatedAt or ttl (at least 10 minutes): %s", what, raw)
	}
	return task
}

func safeBuild2025(task map[string]any) map[string]any {
	p := map[string]any{"name": tools.ToolSafeBuild, "arguments": map[string]any{}}
	if task != nil {
		p["task"] = task
	}
	return p
}

// create2025 calls reclazz_safe_build with a task param and returns the
// created task.
func create2025(t *testing.T, c client2025) task2025 {
	t.Helper()
	a := call(t, c, "tools/call", safeBuild2025(map[string]any{"ttl": 60000}))
	if a.code != 0 || len(a.result) != 1 || a.result["task"] == nil {
		t.Fatalf("tools/call with a task = %v (error %d %s), want a CreateTaskResult {task}", a.result, a.code, a.message)
	}
	var inner map[string]json.RawMessage
	if err := json.Unmarshal(a.result["task"], &inner); err != nil {
		t.Fatal(err)
	}
	task := asTask(t, "CreateTaskResult.task", inner)
	if task.Status != "working" {
		t.Errorf("a new task's status %q, want working", task.Status)
	}
	return task
}

func taskID2025(id string) map[string]any { return map[string]any{"taskId": id} }

// TestTasks2025Initialize: a 2025-11-25 session sees the tasks capability
// of SEP-1686 and reclazz_safe_build, alone, with taskSupport optional; a
// 2025-06-18 session sees neither, and its tools/call with a task param
// gets the synchronous result.
func TestTasks2025Initialize(t *testing.T) {
	t.Parallel()
	p := mcptest.NewBuildProject(t, map[string]string{"ok": `echo done`})
	srv := mcp.NewServer(mcp.Config{Caller: p.Svc, Version: "test"})
	t.Cleanup(func() { closeServer(srv) })
	for _, v := range []string{"2025-11-25", "2025-06-18"} {
		c := openRawInit(t, srv)
		init := call(t, c, "initialize", map[string]any{"protocolVersion": v})
		var caps map[string]json.RawMessage
		_ = json.Unmarshal(init.result["capabilities"], &caps)
		wantCaps := `{"cancel":{},"list":{},"requests":{"tools":{"call":{}}}}`
		if v != "2025-11-25" {
			wantCaps = ""
		}
		if string(caps["tasks"]) != wantCaps {
			t.Errorf("%s: capabilities.tasks %s, want %q", v, caps["tasks"], wantCaps)
		}
		list := call(t, c, "tools/list", nil)
		var ts []struct {
			Name      string          `json:"name"`
			Execution json.RawMessage `json:"execution"`
		}
		if err := json.Unmarshal(list.result["tools"], &ts); err != nil || len(ts) == 0 {
			t.Fatalf("%s: tools/list %v: %v", v, list.result, err)
		}
		for _, tool := range ts {
			want := ""
			if v == "2025-11-25" && tool.Name == tools.ToolSafeBuild {
				want = `{"taskSupport":"optional"}`
			}
			if string(tool.Execution) != want {
				t.Errorf("%s: %s execution %s, want %q", v, tool.Name, tool.Execution, want)
			}
		}
		if v == "2025-06-18" {
			a := call(t, c, "tools/call", safeBuild2025(map[string]any{}))
			if a.code != 0 || a.result["task"] != nil || a.result["structuredContent"] == nil {
				t.Errorf("2025-06-18 tools/call with a task: %v (error %d), want the synchronous result", a.result, a.code)
			}
			for _, m := range []string{mcptask.MethodResult, mcptask.MethodList} {
				if a := call(t, c, m, taskID2025("x")); a.code != -32601 || a.message != "Method not found: "+m {
					t.Errorf("2025-06-18 %s: error %d %q, want -32601 Method not found", m, a.code, a.message)
				}
			}
		}
	}
}

// openRawInit is a stdio session of srv that has not sent initialize.
func openRawInit(t *testing.T, srv *mcp.Server) *stdio2025 { return newStdio2025(t, srv) }

// TestSafeBuildTask2025: over both transports, reclazz_safe_build with a
// task param answers a CreateTaskResult at once; a tasks/result sent at
// once waits for the build while tasks/get is answered beside it, and then
// returns the very tools/call result with the related-task _meta; the task
// reads completed and tasks/list holds it. A build that fails is a failed
// task whose tasks/result is the isError result.
func TestSafeBuildTask2025(t *testing.T) {
	t.Parallel()
	for _, transport := range []string{"stdio", "http"} {
		t.Run(transport, func(t *testing.T) {
			t.Parallel()
			p := mcptest.NewBuildProject(t, map[string]string{"ok": gateBuild})
			gate := filepath.Join(p.Dir, "gate")
			if err := syscall.Mkfifo(gate, 0o600); err != nil {
				t.Fatal(err)
			}
			c, _ := open2025(t, p.Svc, transport)
			task := create2025(t, c)
			pending := c.send(mcptask.MethodResult, taskID2025(task.TaskID))
			// The build hangs, so tasks/result still waits: tasks/get is
			// answered beside it.
			got := call(t, c, mcptask.MethodGet, taskID2025(task.TaskID))
			if got.code != 0 || asTask(t, "tasks/get", got.result).Status != "working" || got.result["_meta"] != nil {
				t.Fatalf("tasks/get while tasks/result waits: %v (error %d %s), want working without _meta", got.result, got.code, got.message)
			}
			select {
			case a := <-pending:
				t.Fatalf("tasks/result answered before the task ended: %v", a)
			default:
			}
			openGate(t, gate)
			res := waitAnswer(t, pending, "tasks/result")
			var meta map[string]map[string]string
			if res.code != 0 || json.Unmarshal(res.result["_meta"], &meta) != nil || meta[mcptask.MetaKeyRelatedTask]["taskId"] != task.TaskID {
				t.Fatalf("tasks/result = %v (error %d %s), want the tool result with _meta related-task %s", res.result, res.code, res.message, task.TaskID)
			}
			var isError bool
			_ = json.Unmarshal(res.result["isError"], &isError)
			if !isError || res.result["structuredContent"] == nil || res.result["content"] == nil {
				t.Fatalf("tasks/result of a failed build: %v, want the tool's isError result", res.result)
			}
			done := asTask(t, "tasks/get", call(t, c, mcptask.MethodGet, taskID2025(task.TaskID)).result)
			if done.Status != "failed" {
				t.Errorf("a build that failed: task %s, want failed (a tool result with isError)", done.Status)
			}
			list := call(t, c, mcptask.MethodList, nil)
			var listed []map[string]json.RawMessage
			if list.code != 0 || json.Unmarshal(list.result["tasks"], &listed) != nil || len(listed) != 1 || str(listed[0]["taskId"]) != task.TaskID {
				t.Errorf("tasks/list = %v (error %d), want the one task", list.result, list.code)
			}
			if list.result["nextCursor"] != nil {
				t.Errorf("tasks/list of one task has a nextCursor: %s", list.result["nextCursor"])
			}
		})
	}
}

// gateBuild waits for a line on the FIFO gate, then fails as a compiler
// does.
const gateBuild = `echo waiting for the gate; read x < gate; echo "A.java:1: error: cannot find symbol" >&2; exit 1`

// openGate lets gateBuild go on: it writes a line to the FIFO, which blocks
// until the build reads it (at most 30 s).
func openGate(t *testing.T, gate string) {
	t.Helper()
	done := make(chan error, 1)
	go func() {
		f, err := os.OpenFile(gate, os.O_WRONLY, 0)
		if err == nil {
			_, err = f.WriteString("go\n")
			if cerr := f.Close(); err == nil {
				err = cerr
			}
		}
		done <- err
	}()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("opening the gate: %v", err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("the build never read the gate within 30 s")
	}
}

// httptestServer serves srv's HTTP front with the test token; its URL.
func httptestServer(t *testing.T, srv *mcp.Server) string {
	t.Helper()
	h := srv.HTTPHandler(testToken)
	ts := httptest.NewServer(h)
	t.Cleanup(func() {
		h.Close()
		ts.Close()
	})
	return ts.URL + httpfront.HTTPPath
}

func waitAnswer(t *testing.T, ch <-chan answer, what string) answer {
	t.Helper()
	select {
	case a := <-ch:
		return a
	case <-time.After(60 * time.Second):
		t.Fatalf("no answer to %s within 60 s", what)
		return answer{}
	}
}

// TestSafeBuildTask2025Completed: a build that succeeds is a completed
// task; tasks/result returns the same result a synchronous call gives, the
// changed class applied.
func TestSafeBuildTask2025Completed(t *testing.T) {
	t.Parallel()
	for _, transport := range []string{"stdio", "http"} {
		t.Run(transport, func(t *testing.T) {
			t.Parallel()
			p := mcptest.NewBuildProject(t, map[string]string{"ok": mcptest.OKBuild})
			c, _ := open2025(t, p.Svc, transport)
			task := create2025(t, c)
			res := waitAnswer(t, c.send(mcptask.MethodResult, taskID2025(task.TaskID)), "tasks/result")
			var out struct {
				IsError           bool           `json:"isError"`
				StructuredContent map[string]any `json:"structuredContent"`
			}
			raw, _ := json.Marshal(res.result)
			if res.code != 0 || json.Unmarshal(raw, &out) != nil || out.IsError || out.StructuredContent["outcome"] != "ok" {
				t.Fatalf("tasks/result = %s (error %d %s), want outcome ok", raw, res.code, res.message)
			}
			if cc, _ := out.StructuredContent["changedClasses"].(map[string]any); cc["allApplied"] != true {
				t.Errorf("changedClasses of the task's build: %v", cc)
			}
			if got := asTask(t, "tasks/get", call(t, c, mcptask.MethodGet, taskID2025(task.TaskID)).result); got.Status != "completed" {
				t.Errorf("task %s after its build succeeded, want completed", got.Status)
			}
			// A call without a task param stays synchronous.
			if a := call(t, c, "tools/call", safeBuild2025(nil)); a.code != 0 || a.result["task"] != nil || a.result["structuredContent"] == nil {
				t.Errorf("tools/call without a task: %v (error %d), want the synchronous result", a.result, a.code)
			}
		})
	}
}

// TestSafeBuildTask2025Cancel: tasks/cancel answers the task cancelled at
// once; the build stops as a cancellation stops it (group gone, BUILD
// failed acknowledged); the waiting tasks/result returns the tool's answer
// to the cancellation; the task stays cancelled, and a second cancel is
// -32602.
func TestSafeBuildTask2025Cancel(t *testing.T) {
	t.Parallel()
	for _, transport := range []string{"stdio", "http"} {
		t.Run(transport, func(t *testing.T) {
			t.Parallel()
			p := mcptest.NewBuildProject(t, map[string]string{"ok": mcptest.HangBuild})
			c, _ := open2025(t, p.Svc, transport)
			task := create2025(t, c)
			pids := wait.PIDFile(t, 10*time.Second, filepath.Join(p.Dir, "pids"))
			pending := c.send(mcptask.MethodResult, taskID2025(task.TaskID))
			ack := call(t, c, mcptask.MethodCancel, taskID2025(task.TaskID))
			if ack.code != 0 || asTask(t, "tasks/cancel", ack.result).Status != "cancelled" {
				t.Fatalf("tasks/cancel = %v (error %d %s), want the task, cancelled", ack.result, ack.code, ack.message)
			}
			res := waitAnswer(t, pending, "tasks/result")
			var isError bool
			_ = json.Unmarshal(res.result["isError"], &isError)
			if res.code != 0 || !isError {
				t.Errorf("tasks/result of a cancelled task = %v (error %d %s), want the tool's isError answer", res.result, res.code, res.message)
			}
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			if _, err := p.Agent.WaitCommand(ctx, "BUILD failed request="); err != nil {
				t.Fatalf("BUILD failed never reached the agent: %v", err)
			}
			wait.Gone(t, 10*time.Second, pids...)
			if got := asTask(t, "tasks/get", call(t, c, mcptask.MethodGet, taskID2025(task.TaskID)).result); got.Status != "cancelled" {
				t.Errorf("task %s after its cancellation, want cancelled", got.Status)
			}
			if a := call(t, c, mcptask.MethodCancel, taskID2025(task.TaskID)); a.code != -32602 || !strings.Contains(a.message, "terminal status cancelled") {
				t.Errorf("second tasks/cancel: error %d %q, want -32602 naming the terminal status", a.code, a.message)
			}
		})
	}
}

// TestTasks2025Errors: the errors of SEP-1686 on both transports.
func TestTasks2025Errors(t *testing.T) {
	t.Parallel()
	for _, transport := range []string{"stdio", "http"} {
		t.Run(transport, func(t *testing.T) {
			t.Parallel()
			p := mcptest.NewBuildProject(t, map[string]string{"ok": `echo done`})
			c, _ := open2025(t, p.Svc, transport)
			for _, m := range []string{mcptask.MethodGet, mcptask.MethodResult, mcptask.MethodCancel} {
				if a := call(t, c, m, taskID2025("c29tZS10YXNrLXRoYXQtbmV2ZXItZXhpc3RlZA")); a.code != -32602 {
					t.Errorf("%s of an unknown id: error %d %q, want -32602", m, a.code, a.message)
				}
				if a := call(t, c, m, nil); a.code != -32602 {
					t.Errorf("%s without taskId: error %d %q, want -32602", m, a.code, a.message)
				}
				if a := call(t, c, m, map[string]any{"taskId": 7}); a.code != -32602 {
					t.Errorf("%s with a number taskId: error %d %q, want -32602", m, a.code, a.message)
				}
			}
			for _, cursor := range []any{"not-a-cursor!", 7} {
				if a := call(t, c, mcptask.MethodList, map[string]any{"cursor": cursor}); a.code != -32602 {
					t.Errorf("tasks/list with cursor %v: error %d %q, want -32602", cursor, a.code, a.message)
				}
			}
			if a := call(t, c, mcptask.MethodUpdate, map[string]any{"taskId": "x", "inputResponses": map[string]any{}}); a.code != -32601 {
				t.Errorf("tasks/update (not in 2025-11-25): error %d %q, want -32601", a.code, a.message)
			}
			status := map[string]any{"name": tools.ToolStatus, "arguments": map[string]any{}, "task": map[string]any{}}
			if a := call(t, c, "tools/call", status); a.code != -32601 {
				t.Errorf("reclazz_status with a task (taskSupport forbidden): error %d %q, want -32601", a.code, a.message)
			}
			for _, bad := range []any{"soon", map[string]any{"ttl": "long"}} {
				params := safeBuild2025(nil)
				params["task"] = bad
				if a := call(t, c, "tools/call", params); a.code != -32602 {
					t.Errorf("tools/call with task %v: error %d %q, want -32602", bad, a.code, a.message)
				}
			}
		})
	}
}

// TestTasks2025Isolation: a task created in one 2025-11-25 session is
// unknown to another (tasks/get, tasks/result, tasks/cancel: -32602;
// tasks/list: empty), and to the HTTP front's clients; over HTTP a task is
// unknown to another session id and to a client without one; the session
// that created it still reaches it.
func TestTasks2025Isolation(t *testing.T) {
	t.Parallel()
	p := mcptest.NewBuildProject(t, map[string]string{"ok": mcptest.HangBuild})
	srv := mcp.NewServer(mcp.Config{Caller: p.Svc, Version: "test"})
	t.Cleanup(func() { closeServer(srv) })
	a := openStdio2025(t, srv, "2025-11-25")
	b := openStdio2025(t, srv, "2025-11-25")
	task := create2025(t, a)
	for _, m := range []string{mcptask.MethodGet, mcptask.MethodResult, mcptask.MethodCancel} {
		if got := call(t, b, m, taskID2025(task.TaskID)); got.code != -32602 {
			t.Errorf("%s of another session's task: %v (error %d), want -32602", m, got.result, got.code)
		}
	}
	if got := call(t, b, mcptask.MethodList, nil); got.code != 0 || string(got.result["tasks"]) != "[]" {
		t.Errorf("tasks/list of another session: %v (error %d), want no tasks", got.result, got.code)
	}
	ts := httptestServer(t, srv)
	h := &http2025{t: t, url: ts, version: "2025-11-25"}
	if got := call(t, h, mcptask.MethodGet, taskID2025(task.TaskID)); got.code != -32602 {
		t.Errorf("tasks/get over HTTP of a stdio session's task: %v (error %d), want -32602", got.result, got.code)
	}
	if got := call(t, h, mcptask.MethodList, nil); got.code != 0 || string(got.result["tasks"]) != "[]" {
		t.Errorf("tasks/list over HTTP: %v (error %d), want no tasks", got.result, got.code)
	}
	// Over HTTP a task belongs to the session id initialize gave.
	h1 := &http2025{t: t, url: ts, version: "2025-11-25"}
	h2 := &http2025{t: t, url: ts, version: "2025-11-25"}
	for _, h := range []*http2025{h1, h2} {
		if got := call(t, h, "initialize", map[string]any{"protocolVersion": "2025-11-25"}); got.code != 0 || h.session == "" {
			t.Fatalf("initialize over HTTP: error %d, session id %q", got.code, h.session)
		}
	}
	theirs := create2025(t, h1)
	for _, other := range []*http2025{h2, h} {
		if got := call(t, other, mcptask.MethodGet, taskID2025(theirs.TaskID)); got.code != -32602 {
			t.Errorf("tasks/get of another HTTP session's task: %v (error %d), want -32602", got.result, got.code)
		}
		if got := call(t, other, mcptask.MethodList, nil); got.code != 0 || string(got.result["tasks"]) != "[]" {
			t.Errorf("tasks/list of another HTTP session: %v (error %d), want no tasks", got.result, got.code)
		}
	}
	if got := call(t, h1, mcptask.MethodCancel, taskID2025(theirs.TaskID)); got.code != 0 {
		t.Errorf("tasks/cancel by the HTTP session that created it: error %d %s", got.code, got.message)
	}
	waitAnswer(t, h1.send(mcptask.MethodResult, taskID2025(theirs.TaskID)), "tasks/result")
	if got := asTask(t, "tasks/get", call(t, a, mcptask.MethodGet, taskID2025(task.TaskID)).result); got.Status != "working" {
		t.Errorf("the creating session's tasks/get: %s, want working", got.Status)
	}
	if got := call(t, a, mcptask.MethodCancel, taskID2025(task.TaskID)); got.code != 0 {
		t.Errorf("the creating session's tasks/cancel: error %d %s", got.code, got.message)
	}
	waitAnswer(t, a.send(mcptask.MethodResult, taskID2025(task.TaskID)), "tasks/result")
}
