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
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/buildguard/buildguard/harness/mcptest"
	"github.com/buildguard/buildguard/internal/testsupport/lockedbuf"
	"github.com/buildguard/buildguard/internal/testsupport/wait"
	"github.com/buildguard/buildguard/mcp"
	"github.com/buildguard/buildguard/mcp/httpfront"
	"github.com/buildguard/buildguard/service/mcptask"
	"github.com/buildguard/buildguard/service/tools"
)

// The tasks extension on the real server (docs/decisions.md#D17), spoken as
// raw JSON-RPC from the SEP: go-sdk's client has no tasks support.

// meta2026 is the _meta of a 2026-07-28 request, declaring the tasks
// extension or not.
func meta2026(declare bool) map[string]any {
	caps := map[string]any{}
	if declare {
		caps["extensions"] = map[string]any{mcptask.ExtensionID: map[string]any{}}
	}
	return map[string]any{"io.modelcontextprotocol/protocolVersion": "2026-07-28", "io.modelcontextprotocol/clientCapabilities": caps}
}

// rpc is a JSON-RPC request line.
func rpc(id int, method string, params map[string]any) string {
	b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": id, "method": method, "params": params})
	return string(b)
}

// taskClient speaks the tasks extension over one transport.
type taskClient interface {
	call(method string, params map[string]any) (result map[string]json.RawMessage, errCode int64)
}

// stdioTasks is a stdio session of a server the test holds.
type stdioTasks struct {
	t      *testing.T
	srv    *mcp.Server
	in     *io.PipeWriter
	out    *bufio.Reader
	served chan error
	id     int
}

func startStdioTasks(t *testing.T, caller mcp.Caller) *stdioTasks {
	t.Helper()
	srv := mcp.NewServer(mcp.Config{Caller: caller, Version: "test", Logger: mcptest.TestLogger(&lockedbuf.Buffer{})})
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		_ = srv.Close(ctx)
	})
	return serveStdioTasks(t, srv)
}

// serveStdioTasks starts a stdio session of srv; the session's stdin ends
// with the test.
func serveStdioTasks(t *testing.T, srv *mcp.Server) *stdioTasks {
	t.Helper()
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	s := &stdioTasks{t: t, srv: srv, in: inW, out: bufio.NewReader(outR), served: make(chan error, 1)}
	go func() {
		err := s.srv.ServeStdio(context.Background(), inR, outW)
		outW.Close()
		s.served <- err
	}()
	t.Cleanup(func() {
		inW.Close()
		go io.Copy(io.Discard, outR)
	})
	return s
}

func (s *stdioTasks) call(method string, params map[string]any) (map[string]json.RawMessage, int64) {
	s.t.Helper()
	s.id++
	if _, err := io.WriteString(s.in, rpc(s.id, method, params)+"\n"); err != nil {
		s.t.Fatalf("writing %s: %v", method, err)
	}
	line := make(chan string, 1)
	go func() { l, _ := s.out.ReadString('\n'); line <- l }()
	select {
	case l := <-line:
		return decodeAnswer(s.t, []byte(l), s.id)
	case <-time.After(20 * time.Second):
		s.t.Fatalf("no answer to %s within 20 s", method)
		return nil, 0
	}
}

func decodeAnswer(t *testing.T, b []byte, id int) (map[string]json.RawMessage, int64) {
	t.Helper()
	var m struct {
		ID     json.RawMessage            `json:"id"`
		Result map[string]json.RawMessage `json:"result"`
		Error  *struct {
			Code    int64           `json:"code"`
			Message json.RawMessage `json:"message"`
			Data    json.RawMessage `json:"data"`
		} `json:"error"`
	}
	if err := json.Unmarshal(b, &m); err != nil || string(m.ID) != fmt.Sprint(id) {
		t.Fatalf("answer %q to request %d: %v", b, id, err)
	}
	if m.Error != nil {
		// An error's message, and its data for the errors that have one.
		refusal := map[string]json.RawMessage{"message": m.Error.Message}
		if m.Error.Data != nil {
			refusal["data"] = m.Error.Data
		}
		return refusal, m.Error.Code
	}
	return m.Result, 0
}

// httpTasks posts each request on its own, with the 2026-07-28 headers and
// the token, as a client of the SEP does (Mcp-Name = taskId for tasks/*).
type httpTasks struct {
	t       *testing.T
	url     string
	id      int
	name    func(method string, params map[string]any) string // the Mcp-Name to send; nil = the right one
	noToken bool
	status  int // the HTTP status of the last answer
}

func (h *httpTasks) call(method string, params map[string]any) (map[string]json.RawMessage, int64) {
	h.t.Helper()
	h.id++
	req, _ := http.NewRequest(http.MethodPost, h.url, strings.NewReader(rpc(h.id, method, params)))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("MCP-Protocol-Version", "2026-07-28")
	req.Header.Set("Mcp-Method", method)
	name := ""
	switch method {
	case "tools/call":
		name, _ = params["name"].(string)
	case mcptask.MethodGet, mcptask.MethodCancel, mcptask.MethodUpdate:
		name, _ = params["taskId"].(string)
	}
	if h.name != nil {
		name = h.name(method, params)
	}
	if name != "" {
		req.Header.Set("Mcp-Name", name)
	}
	if !h.noToken {
		req.Header.Set("Authorization", "Bearer "+testToken)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	resp, err := http.DefaultClient.Do(req.WithContext(ctx))
	if err != nil {
		h.t.Fatalf("%s: %v", method, err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	h.status = resp.StatusCode
	if resp.StatusCode == http.StatusUnauthorized {
		return nil, -401
	}
	return decodeAnswer(h.t, bytes.TrimSpace(body), h.id)
}

func startHTTPTasks(t *testing.T, caller mcp.Caller) (*mcp.Server, *httpTasks) {
	t.Helper()
	logs := &lockedbuf.Buffer{}
	srv := mcp.NewServer(mcp.Config{Caller: caller, Version: "test", Logger: mcptest.TestLogger(logs)})
	h := srv.HTTPHandler(testToken)
	ts := httptest.NewServer(h)
	t.Cleanup(func() {
		h.Close()
		ts.Close()
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		_ = srv.Close(ctx)
	})
	return srv, &httpTasks{t: t, url: ts.URL + httpfront.HTTPPath}
}

func safeBuild(declare bool) map[string]any {
	return map[string]any{"name": tools.ToolSafeBuild, "arguments": map[string]any{}, "_meta": meta2026(declare)}
}

func taskParams(id string, declare bool) map[string]any {
	return map[string]any{"taskId": id, "_meta": meta2026(declare)}
}

func str(raw json.RawMessage) string {
	var s string
	_ = json.Unmarshal(raw, &s)
	return s
}

// pollTask polls tasks/get until the task is terminal (bounded), returning
// every status message seen on the way and the last answer.
func pollTask(t *testing.T, c taskClient, id string) (map[string]json.RawMessage, []string) {
	t.Helper()
	var messages []string
	deadline := time.Now().Add(60 * time.Second)
	for time.Now().Before(deadline) {
		res, code := c.call(mcptask.MethodGet, taskParams(id, true))
		if code != 0 {
			t.Fatalf("tasks/get: error %d", code)
		}
		if m := str(res["statusMessage"]); m != "" && (len(messages) == 0 || messages[len(messages)-1] != m) {
			messages = append(messages, m)
		}
		switch str(res["status"]) {
		case "completed", "failed", "cancelled":
			return res, messages
		case "working":
		default:
			t.Fatalf("tasks/get status %s", res["status"])
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatalf("task %s not finished within 60 s", id)
	return nil, nil
}

// TestSafeBuildTask: over both transports, a request that declares the
// extension gets a CreateTaskResult at once; tasks/get reports the build's
// latest line while it runs and then the whole tool result, the same one a
// synchronous call gives; a request that does not declare it, and every
// other tool, get the synchronous result; server/discover advertises the
// extension.
func TestSafeBuildTask(t *testing.T) {
	t.Parallel()
	for _, transport := range []string{"stdio", "http"} {
		t.Run(transport, func(t *testing.T) {
			t.Parallel()
			p := mcptest.NewBuildProject(t, map[string]string{"ok": mcptest.OKBuild})
			var c taskClient
			if transport == "stdio" {
				c = startStdioTasks(t, p.Svc)
			} else {
				_, c = startHTTPTasks(t, p.Svc)
			}
			disc, code := c.call("server/discover", map[string]any{"_meta": meta2026(false)})
			var caps struct {
				Extensions map[string]json.RawMessage `json:"extensions"`
			}
			if code != 0 || json.Unmarshal(disc["capabilities"], &caps) != nil || string(caps.Extensions[mcptask.ExtensionID]) != "{}" {
				t.Fatalf("server/discover capabilities %s (error %d), want the tasks extension", disc["capabilities"], code)
			}

			created, code := c.call("tools/call", safeBuild(true))
			if code != 0 || str(created["resultType"]) != "task" || str(created["status"]) != "working" || str(created["taskId"]) == "" {
				t.Fatalf("declared reclazz_safe_build = %v (error %d), want a CreateTaskResult", created, code)
			}
			for _, f := range []string{"createdAt", "lastUpdatedAt", "ttlMs", "pollIntervalMs", "statusMessage"} {
				if created[f] == nil {
					t.Errorf("CreateTaskResult lacks %s", f)
				}
			}
			var ttl int64
			if json.Unmarshal(created["ttlMs"], &ttl) != nil || ttl < (10*time.Minute).Milliseconds() {
				t.Errorf("ttlMs %s, want at least 10 minutes", created["ttlMs"])
			}
			id := str(created["taskId"])
			done, messages := pollTask(t, c, id)
			if str(done["status"]) != "completed" || str(done["resultType"]) != "complete" {
				t.Fatalf("finished task: %v", done)
			}
			var res struct {
				ResultType        string         `json:"resultType"`
				IsError           bool           `json:"isError"`
				StructuredContent map[string]any `json:"structuredContent"`
				Content           []struct{ Text string }
			}
			if err := json.Unmarshal(done["result"], &res); err != nil || res.IsError || res.StructuredContent["outcome"] != "ok" || res.ResultType != "complete" {
				t.Fatalf("task result %s: %v", done["result"], err)
			}
			if cc, _ := res.StructuredContent["changedClasses"].(map[string]any); cc["allApplied"] != true {
				t.Errorf("changedClasses of the task's build: %v", cc)
			}
			if text, _ := json.Marshal(res.StructuredContent); len(res.Content) != 1 || !mcptest.JSONEqual(t, text, []byte(res.Content[0].Text)) {
				t.Errorf("the task's result text is not its structuredContent")
			}
			sawLine := false
			for _, m := range messages {
				sawLine = sawLine || strings.HasPrefix(m, "compiling step") || m == "BUILD SUCCESSFUL"
			}
			if !sawLine {
				t.Errorf("no output line as statusMessage while it ran: %q", messages)
			}

			// Not declared: the synchronous answer.
			sync, code := c.call("tools/call", safeBuild(false))
			if code != 0 || sync["taskId"] != nil || str(sync["resultType"]) != "complete" || sync["structuredContent"] == nil {
				t.Errorf("undeclared reclazz_safe_build = %v (error %d), want the synchronous result", sync, code)
			}
			// Every other tool stays synchronous, declared or not.
			status, code := c.call("tools/call", map[string]any{"name": tools.ToolStatus, "arguments": map[string]any{}, "_meta": meta2026(true)})
			if code != 0 || status["taskId"] != nil || status["structuredContent"] == nil {
				t.Errorf("declared reclazz_status = %v (error %d), want the synchronous result", status, code)
			}
		})
	}
}

// TestSafeBuildTaskCancel: tasks/cancel stops the build as a cancellation
// does (group gone, BUILD failed acknowledged); the task reads cancelled; a
// second cancel is the same empty acknowledgement.
func TestSafeBuildTaskCancel(t *testing.T) {
	t.Parallel()
	p := mcptest.NewBuildProject(t, map[string]string{"ok": mcptest.HangBuild})
	c := startStdioTasks(t, p.Svc)
	created, code := c.call("tools/call", safeBuild(true))
	if code != 0 {
		t.Fatalf("tools/call: error %d", code)
	}
	id := str(created["taskId"])
	pids := wait.PIDFile(t, 10*time.Second, filepath.Join(p.Dir, "pids"))
	for range 2 {
		ack, code := c.call(mcptask.MethodCancel, taskParams(id, true))
		if code != 0 || len(ack) != 2 || str(ack["resultType"]) != "complete" || ack["_meta"] == nil {
			t.Errorf("tasks/cancel ack = %v (error %d), want {resultType:complete} and _meta only", ack, code)
		}
	}
	done, _ := pollTask(t, c, id)
	if str(done["status"]) != "cancelled" || done["result"] != nil {
		t.Errorf("cancelled task: %v", done)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if _, err := p.Agent.WaitCommand(ctx, "BUILD failed request="); err != nil {
		t.Fatalf("BUILD failed never reached the agent: %v", err)
	}
	wait.Gone(t, 10*time.Second, pids...)
	if ack, code := c.call(mcptask.MethodCancel, taskParams(id, true)); code != 0 || str(ack["resultType"]) != "complete" {
		t.Errorf("tasks/cancel of a cancelled task: %v (error %d)", ack, code)
	}
}

// TestTaskErrors: the SEP's errors over both transports: -32021 for a
// request that did not declare the extension (naming it in its data, which
// the 2026-07-28 schema requires), -32602 for an unknown id,
// -32601 for the removed tasks/result and tasks/list; over HTTP -32020 for
// an Mcp-Name that is not the taskId and 401 without the token.
func TestTaskErrors(t *testing.T) {
	t.Parallel()
	for _, transport := range []string{"stdio", "http"} {
		t.Run(transport, func(t *testing.T) {
			t.Parallel()
			p := mcptest.NewBuildProject(t, map[string]string{"ok": `echo done`})
			var c taskClient
			var h *httpTasks
			if transport == "stdio" {
				c = startStdioTasks(t, p.Svc)
			} else {
				_, h = startHTTPTasks(t, p.Svc)
				c = h
			}
			created, _ := c.call("tools/call", safeBuild(true))
			id := str(created["taskId"])
			pollTask(t, c, id)
			for _, m := range []string{mcptask.MethodGet, mcptask.MethodCancel, mcptask.MethodUpdate} {
				p := taskParams(id, false)
				p["inputResponses"] = map[string]any{}
				refused, code := c.call(m, p)
				var data struct {
					Required struct {
						Extensions map[string]json.RawMessage `json:"extensions"`
					} `json:"requiredCapabilities"`
				}
				if code != mcptask.CodeMissingCapability || json.Unmarshal(refused["data"], &data) != nil || data.Required.Extensions[mcptask.ExtensionID] == nil {
					t.Errorf("%s without the declaration: error %d with data %s, want -32021 naming %s in data.requiredCapabilities.extensions", m, code, refused["data"], mcptask.ExtensionID)
				}
				// Without _meta: a stdio session's request never declared the
				// extension (-32021); over HTTP a 2026-07-28 request (by its
				// header) lacks the _meta its version requires (-32602).
				want := int64(mcptask.CodeMissingCapability)
				if h != nil {
					want = -32602
				}
				if _, code := c.call(m, map[string]any{"taskId": id}); code != want {
					t.Errorf("%s without _meta: error %d, want %d", m, code, want)
				}
				p = taskParams("c29tZS10YXNrLXRoYXQtbmV2ZXItZXhpc3RlZA", true)
				p["inputResponses"] = map[string]any{}
				if _, code := c.call(m, p); code != -32602 {
					t.Errorf("%s of an unknown id: error %d, want -32602", m, code)
				}
			}
			for _, m := range []string{"tasks/result", "tasks/list"} {
				if _, code := c.call(m, taskParams(id, true)); code != -32601 {
					t.Errorf("%s: error %d, want -32601", m, code)
				}
			}
			if h == nil {
				return
			}
			h.name = func(string, map[string]any) string { return "another-task" }
			for _, m := range []string{mcptask.MethodGet, mcptask.MethodCancel, mcptask.MethodUpdate} {
				p := taskParams(id, true)
				p["inputResponses"] = map[string]any{}
				if _, code := h.call(m, p); code != mcptask.CodeHeaderMismatch || h.status != http.StatusBadRequest {
					t.Errorf("%s with a wrong Mcp-Name: error %d, HTTP %d; want -32020 with 400", m, code, h.status)
				}
			}
			h.name = func(string, map[string]any) string { return "" }
			if _, code := h.call(mcptask.MethodGet, taskParams(id, true)); code != mcptask.CodeHeaderMismatch || h.status != http.StatusBadRequest {
				t.Errorf("tasks/get without Mcp-Name: error %d, HTTP %d; want -32020 with 400", code, h.status)
			}
			h.name, h.noToken = nil, true
			if _, code := h.call(mcptask.MethodGet, taskParams(id, true)); code != -401 {
				t.Errorf("tasks/get without the token: %d, want HTTP 401", code)
			}
		})
	}
}

// TestTaskParamsOfTheWrongType: a tasks/* request whose taskId is not a
// string, or a tasks/update whose inputResponses is not an object, is
// -32602 with the extension's own words over both transports (over HTTP
// whatever its Mcp-Name: the params are wrong before any header can be
// compared with them), never go-sdk's decoding error with the params
// echoed back.
func TestTaskParamsOfTheWrongType(t *testing.T) {
	t.Parallel()
	for _, transport := range []string{"stdio", "http"} {
		t.Run(transport, func(t *testing.T) {
			t.Parallel()
			var c taskClient
			if transport == "stdio" {
				c = startStdioTasks(t, tools.NewService(tools.Deps{Base: t.TempDir()}))
			} else {
				_, h := startHTTPTasks(t, tools.NewService(tools.Deps{Base: t.TempDir()}))
				h.name = func(_ string, p map[string]any) string { return fmt.Sprint(p["taskId"]) }
				c = h
			}
			const idText = `"Invalid params: taskId must be a non-empty string"`
			const responsesText = `"Invalid params: inputResponses must be an object"`
			for _, tc := range []struct {
				method string
				params map[string]any
				want   string
			}{
				{mcptask.MethodGet, map[string]any{"taskId": 5}, idText},
				{mcptask.MethodCancel, map[string]any{"taskId": 5}, idText},
				{mcptask.MethodUpdate, map[string]any{"taskId": 5, "inputResponses": map[string]any{}}, idText},
				{mcptask.MethodGet, map[string]any{"taskId": map[string]any{"x": "secret-param"}}, idText},
				{mcptask.MethodUpdate, map[string]any{"taskId": "some-task", "inputResponses": "secret-param"}, responsesText},
				{mcptask.MethodUpdate, map[string]any{"taskId": "some-task", "inputResponses": []any{"secret-param"}}, responsesText},
				{mcptask.MethodUpdate, map[string]any{"taskId": "some-task", "inputResponses": nil}, responsesText},
			} {
				tc.params["_meta"] = meta2026(true)
				refused, code := c.call(tc.method, tc.params)
				if code != -32602 || string(refused["message"]) != tc.want {
					t.Errorf("%s %v: error %d %s, want -32602 %s", tc.method, tc.params, code, refused["message"], tc.want)
				}
			}
		})
	}
}

// TestSafeBuildTaskOutlivesItsRequest: over HTTP the request that created
// the task is over when its answer arrives; the build goes on, and a later
// request reads its result.
func TestSafeBuildTaskOutlivesItsRequest(t *testing.T) {
	t.Parallel()
	p := mcptest.NewBuildProject(t, map[string]string{"ok": `sleep 1; mkdir -p out/app; printf x > out/app/Main.class; echo built`})
	_, c := startHTTPTasks(t, p.Svc)
	start := time.Now()
	created, code := c.call("tools/call", safeBuild(true))
	if code != 0 || time.Since(start) > 900*time.Millisecond {
		t.Fatalf("creating the task took %s (error %d); it must answer before the build ends", time.Since(start), code)
	}
	done, _ := pollTask(t, c, str(created["taskId"]))
	if !strings.Contains(string(done["result"]), `"outcome":"ok"`) {
		t.Errorf("the build did not finish after its request ended: %s", done["result"])
	}
}

// TestCloseEndsRunningTasks: stopping the server (stdin EOF, a signal, HTTP
// shutdown all call Close) ends a running task's build as a cancellation
// does: BUILD failed acknowledged, group gone, the task cancelled.
func TestCloseEndsRunningTasks(t *testing.T) {
	t.Parallel()
	p := mcptest.NewBuildProject(t, map[string]string{"ok": mcptest.HangBuild})
	c := startStdioTasks(t, p.Svc)
	created, _ := c.call("tools/call", safeBuild(true))
	id := str(created["taskId"])
	pids := wait.PIDFile(t, 10*time.Second, filepath.Join(p.Dir, "pids"))
	c.in.Close() // stdin EOF: the session ends, the build does not
	select {
	case err := <-c.served:
		if err != nil {
			t.Fatalf("ServeStdio: %v", err)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("ServeStdio did not return after EOF")
	}
	if left := wait.GoneWithin(0, pids...); len(left) == 0 {
		t.Fatal("the build ended with the session, before Close: the test proves nothing")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := c.srv.Close(ctx); err != nil {
		t.Fatalf("Close: %v", err)
	}
	if _, err := p.Agent.WaitCommand(ctx, "BUILD failed request="); err != nil {
		t.Fatalf("BUILD failed never reached the agent: %v", err)
	}
	wait.Gone(t, 10*time.Second, pids...)
	// Finished tasks stay readable after Close: a later session of the
	// same server reads the task's status.
	d, code := serveStdioTasks(t, c.srv).call(mcptask.MethodGet, taskParams(id, true))
	if code != 0 || str(d["status"]) != string(mcptask.StatusCancelled) {
		t.Errorf("task after Close: %s (error %d)", d["status"], code)
	}
}

// TestSafeBuildTaskWaitingShowsItsPlace: a safe build task that waits in the
// project's build queue has its place and what runs ahead as its
// statusMessage (docs/decisions.md#D18); cancelling it while it waits runs
// nothing.
func TestSafeBuildTaskWaitingShowsItsPlace(t *testing.T) {
	t.Parallel()
	p := mcptest.NewBuildProject(t, map[string]string{"ok": mcptest.HangBuild})
	c := startStdioTasks(t, p.Svc)
	first, code := c.call("tools/call", safeBuild(true))
	if code != 0 {
		t.Fatalf("tools/call: error %d", code)
	}
	wait.PIDFile(t, 10*time.Second, filepath.Join(p.Dir, "pids"))
	second, code := c.call("tools/call", safeBuild(true))
	if code != 0 {
		t.Fatalf("tools/call: error %d", code)
	}
	id := str(second["taskId"])
	var msg string
	wait.For(t, 20*time.Second, "the waiting task's place as its statusMessage", func() bool {
		res, _ := c.call(mcptask.MethodGet, taskParams(id, true))
		msg = str(res["statusMessage"])
		return strings.Contains(msg, "place 2")
	})
	if !strings.Contains(msg, `"ok"`) || !strings.Contains(msg, "running for") {
		t.Errorf("statusMessage %q does not name the running build", msg)
	}
	for _, task := range []string{id, str(first["taskId"])} {
		c.call(mcptask.MethodCancel, taskParams(task, true))
		if done, _ := pollTask(t, c, task); str(done["status"]) != "cancelled" {
			t.Errorf("task %s: %v", task, done)
		}
	}
	if n := strings.Count(strings.Join(p.Agent.Commands(), "\n"), "BUILD started"); n != 1 {
		t.Errorf("the agent saw %d BUILD started, want only the first task's", n)
	}
}
