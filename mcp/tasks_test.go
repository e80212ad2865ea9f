//go:build unix

package mcp

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/buildguard/buildguard/harness/mcptest"
	"github.com/buildguard/buildguard/internal/testsupport/lockedbuf"
	"github.com/buildguard/buildguard/mcp/httpfront"
	"github.com/buildguard/buildguard/service/mcptask"
	"github.com/buildguard/buildguard/service/tools"
)

// The HTTP front's own answer to a task's poll (docs/http.md#4.1), spoken
// as raw JSON-RPC from the SEP: go-sdk's client has no tasks support. The
// tasks extension on the real server is tested in service/mcptask.

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

func startHTTPTasks(t *testing.T, caller Caller) (*Server, *httpTasks) {
	t.Helper()
	logs := &lockedbuf.Buffer{}
	srv := NewServer(Config{Caller: caller, Version: "test", Logger: mcptest.TestLogger(logs)})
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

// TestHTTPTaskPollSameAsSDK: over HTTP the front answers a finished
// task's poll itself (docs/http.md#4.1); with the server's own middleware
// in place, that answer is go-sdk's, byte for byte: the same poll with an
// Accept the front leaves to go-sdk (a wildcard) gets the same bytes.
func TestHTTPTaskPollSameAsSDK(t *testing.T) {
	t.Parallel()
	p := mcptest.NewBuildProject(t, map[string]string{"ok": mcptest.OKBuild})
	_, c := startHTTPTasks(t, p.Svc)
	created, code := c.call("tools/call", safeBuild(true))
	if code != 0 {
		t.Fatalf("reclazz_safe_build: error %d", code)
	}
	id := str(created["taskId"])
	if done, _ := pollTask(t, c, id); str(done["status"]) != "completed" {
		t.Fatalf("finished task: %v", done)
	}
	poll := func(accept string) string {
		t.Helper()
		req, _ := http.NewRequest(http.MethodPost, c.url, strings.NewReader(rpc(9, mcptask.MethodGet, taskParams(id, true))))
		req.Header.Set("Authorization", "Bearer "+testToken)
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", accept)
		req.Header.Set("MCP-Protocol-Version", "2026-07-28")
		req.Header.Set("Mcp-Method", mcptask.MethodGet)
		req.Header.Set("Mcp-Name", id)
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		resp, err := http.DefaultClient.Do(req.WithContext(ctx))
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		return fmt.Sprintf("%d %s %s", resp.StatusCode, resp.Header.Get("Content-Type"), body)
	}
	front, sdk := poll("application/json, text/event-stream"), poll("*/*")
	if !strings.Contains(front, `"status":"completed"`) || !strings.Contains(front, `"io.modelcontextprotocol/serverInfo"`) {
		t.Fatalf("the front's answer: %s", front)
	}
	if front != sdk {
		t.Errorf("the front's answer differs from go-sdk's:\nfront: %s\nsdk:   %s", front, sdk)
	}
}
