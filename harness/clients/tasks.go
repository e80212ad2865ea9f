//go:build unix

package clients

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/buildguard/buildguard/internal/testsupport/lockedbuf"
)

// TasksClient is an MCP client of the tasks extension written from SEP-2663
// and the 2026-07-28 specification alone: raw JSON-RPC over stdio (one line
// per message) or streamable HTTP (one POST per request, with the
// MCP-Protocol-Version, Mcp-Method and Mcp-Name headers). It imports
// nothing of the server's task code, so it checks the server from outside.
//
// Every request is a 2026-07-28 request whose _meta declares the extension.
// Call turns a CreateTaskResult into the tool's own result: it polls
// tasks/get every pollIntervalMs (RequestTimeout bounds each request, never
// the task) until the task is terminal, and a cancelled ctx sends
// tasks/cancel. A synchronous answer is returned as it is.
type TasksClient struct {
	lane string
	// RequestTimeout bounds each JSON-RPC request (not a task). Zero means
	// CallTimeout.
	RequestTimeout time.Duration

	send   func(ctx context.Context, method string, params map[string]any) (json.RawMessage, *rpcError, error)
	closer func() error
	stderr func() string

	serverName, serverVersion string
	// Tasks counts the tool calls that were answered with a task.
	mu    sync.Mutex
	tasks int
}

// tasksExtension is the extension's identifier (SEP-2663).
const tasksExtension = "io.modelcontextprotocol/tasks"

type rpcError struct {
	Code    int64           `json:"code"`
	Message string          `json:"message"`
	Data    json.RawMessage `json:"data,omitempty"`
}

// tasksMeta is the _meta of every request: the 2026-07-28 version and
// client capabilities declaring the tasks extension.
func tasksMeta() map[string]any {
	return map[string]any{
		"io.modelcontextprotocol/protocolVersion": Version20260728,
		"io.modelcontextprotocol/clientInfo":      map[string]any{"name": "buildguard-tasks-client", "version": "1"},
		"io.modelcontextprotocol/clientCapabilities": map[string]any{
			"extensions": map[string]any{tasksExtension: map[string]any{}},
		},
	}
}

// DialTasksStdio starts `buildguard mcp` and asks server/discover.
func DialTasksStdio(ctx context.Context, lane string, s ServerCommand) (*TasksClient, error) {
	stderr := &lockedbuf.Buffer{}
	cmd := s.cmd(stderr)
	in, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("starting buildguard mcp: %w", err)
	}
	st := &stdioLines{in: in, waiting: map[int]chan json.RawMessage{}, done: make(chan struct{})}
	go st.read(bufio.NewReader(out))
	c := &TasksClient{lane: lane, send: st.call, stderr: stderr.String}
	c.closer = func() error {
		in.Close() // EOF: the server drains and exits 0
		exited := make(chan error, 1)
		go func() { exited <- cmd.Wait() }()
		select {
		case err := <-exited:
			return err
		case <-time.After(httpStopTimeout + 30*time.Second):
			_ = cmd.Process.Kill()
			<-exited
			return errors.New("buildguard mcp did not exit after EOF")
		}
	}
	if err := c.discover(ctx); err != nil {
		_ = c.closer()
		return nil, err
	}
	return c, nil
}

// stdioLines correlates response lines with requests by id.
type stdioLines struct {
	mu      sync.Mutex
	in      io.Writer
	next    int
	waiting map[int]chan json.RawMessage
	done    chan struct{}
}

func (s *stdioLines) read(r *bufio.Reader) {
	defer close(s.done)
	for {
		line, err := r.ReadBytes('\n')
		if len(bytes.TrimSpace(line)) > 0 {
			var m struct {
				ID *int `json:"id"`
			}
			if json.Unmarshal(line, &m) == nil && m.ID != nil {
				s.mu.Lock()
				ch := s.waiting[*m.ID]
				delete(s.waiting, *m.ID)
				s.mu.Unlock()
				if ch != nil {
					ch <- line
				}
			}
		}
		if err != nil {
			return
		}
	}
}

func (s *stdioLines) call(ctx context.Context, method string, params map[string]any) (json.RawMessage, *rpcError, error) {
	s.mu.Lock()
	s.next++
	id := s.next
	ch := make(chan json.RawMessage, 1)
	s.waiting[id] = ch
	b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": id, "method": method, "params": params})
	_, err := s.in.Write(append(b, '\n'))
	s.mu.Unlock()
	if err != nil {
		return nil, nil, fmt.Errorf("writing %s: %w", method, err)
	}
	select {
	case line := <-ch:
		return decodeResponse(line)
	case <-s.done:
		return nil, nil, fmt.Errorf("%s: the server closed its output", method)
	case <-ctx.Done():
		s.mu.Lock()
		delete(s.waiting, id)
		s.mu.Unlock()
		return nil, nil, ctx.Err()
	}
}

func decodeResponse(b []byte) (json.RawMessage, *rpcError, error) {
	var m struct {
		Result json.RawMessage `json:"result"`
		Error  *rpcError       `json:"error"`
	}
	if err := json.Unmarshal(b, &m); err != nil {
		return nil, nil, fmt.Errorf("response %q: %w", b, err)
	}
	if m.Error != nil {
		return nil, m.Error, nil
	}
	if m.Result == nil {
		return nil, nil, fmt.Errorf("response without result or error: %s", b)
	}
	return m.Result, nil, nil
}

// DialTasksHTTP starts `buildguard mcp --http` and asks server/discover.
func DialTasksHTTP(ctx context.Context, lane string, s ServerCommand) (*TasksClient, error) {
	srv, err := StartHTTPServer(ctx, s)
	if err != nil {
		return nil, err
	}
	hc := &http.Client{}
	var mu sync.Mutex
	next := 0
	send := func(ctx context.Context, method string, params map[string]any) (json.RawMessage, *rpcError, error) {
		mu.Lock()
		next++
		id := next
		mu.Unlock()
		b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": id, "method": method, "params": params})
		req, err := http.NewRequestWithContext(ctx, http.MethodPost, srv.URL, bytes.NewReader(b))
		if err != nil {
			return nil, nil, err
		}
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		req.Header.Set("MCP-Protocol-Version", Version20260728)
		req.Header.Set("Mcp-Method", method)
		// SEP-2243: the name a request routes by; SEP-2663: a task's id.
		for _, k := range []string{"name", "taskId", "uri"} {
			if v, ok := params[k].(string); ok {
				req.Header.Set("Mcp-Name", v)
				break
			}
		}
		resp, err := hc.Do(req)
		if err != nil {
			return nil, nil, fmt.Errorf("%s: %w", method, err)
		}
		defer resp.Body.Close()
		body, err := io.ReadAll(io.LimitReader(resp.Body, 8<<20))
		if err != nil {
			return nil, nil, fmt.Errorf("%s: reading the answer: %w", method, err)
		}
		if strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
			body = lastEventData(body)
		}
		return decodeResponse(bytes.TrimSpace(body))
	}
	c := &TasksClient{lane: lane, send: send, stderr: srv.Stderr, closer: srv.Stop}
	if err := c.discover(ctx); err != nil {
		_ = srv.Stop()
		return nil, err
	}
	return c, nil
}

// lastEventData is the data of the last event of an event stream: the
// answer comes after any notifications.
func lastEventData(stream []byte) []byte {
	var last []byte
	for _, line := range bytes.Split(stream, []byte("\n")) {
		if d, ok := bytes.CutPrefix(line, []byte("data:")); ok {
			last = bytes.TrimSpace(d)
		}
	}
	return last
}

func (c *TasksClient) timeout() time.Duration {
	if c.RequestTimeout > 0 {
		return c.RequestTimeout
	}
	return CallTimeout
}

// request sends one request with the declaring _meta, bounded by
// RequestTimeout.
func (c *TasksClient) request(ctx context.Context, method string, params map[string]any) (json.RawMessage, *rpcError, error) {
	p := map[string]any{"_meta": tasksMeta()}
	for k, v := range params {
		p[k] = v
	}
	ctx, cancel := context.WithTimeout(ctx, c.timeout())
	defer cancel()
	return c.send(ctx, method, p)
}

func (c *TasksClient) discover(ctx context.Context) error {
	res, rerr, err := c.request(ctx, "server/discover", nil)
	if err != nil {
		return err
	}
	if rerr != nil {
		return fmt.Errorf("server/discover: %d %s", rerr.Code, rerr.Message)
	}
	var d struct {
		Capabilities struct {
			Extensions map[string]json.RawMessage `json:"extensions"`
		} `json:"capabilities"`
		Meta map[string]struct {
			Name    string `json:"name"`
			Version string `json:"version"`
		} `json:"_meta"`
	}
	if err := json.Unmarshal(res, &d); err != nil {
		return fmt.Errorf("server/discover: %w", err)
	}
	if _, ok := d.Capabilities.Extensions[tasksExtension]; !ok {
		return fmt.Errorf("server/discover does not advertise %s: %s", tasksExtension, res)
	}
	info := d.Meta["io.modelcontextprotocol/serverInfo"]
	c.serverName, c.serverVersion = info.Name, info.Version
	return nil
}

// Lane implements Client.
func (c *TasksClient) Lane() string { return c.lane }

// ProtocolVersion implements Client: always 2026-07-28.
func (c *TasksClient) ProtocolVersion() string { return Version20260728 }

// ServerName implements Client (from server/discover).
func (c *TasksClient) ServerName() string { return c.serverName }

// ServerVersion implements Client.
func (c *TasksClient) ServerVersion() string { return c.serverVersion }

// ServerStderr is what the server wrote to stderr (its URL line excepted).
func (c *TasksClient) ServerStderr() string { return c.stderr() }

// Tasks is how many tool calls were answered with a task.
func (c *TasksClient) Tasks() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.tasks
}

// Ping implements Client: 2026-07-28 has no ping; server/discover answers
// instead.
func (c *TasksClient) Ping(ctx context.Context) error { return c.discover(ctx) }

// ListTools implements Client.
func (c *TasksClient) ListTools(ctx context.Context) ([]ToolInfo, error) {
	res, rerr, err := c.request(ctx, "tools/list", nil)
	if err != nil {
		return nil, err
	}
	if rerr != nil {
		return nil, fmt.Errorf("tools/list: %d %s", rerr.Code, rerr.Message)
	}
	var l struct {
		Tools []struct {
			Name         string          `json:"name"`
			OutputSchema json.RawMessage `json:"outputSchema"`
			Annotations  json.RawMessage `json:"annotations"`
		} `json:"tools"`
	}
	if err := json.Unmarshal(res, &l); err != nil {
		return nil, err
	}
	var out []ToolInfo
	for _, t := range l.Tools {
		out = append(out, ToolInfo{Name: t.Name, OutputSchema: t.OutputSchema, HasAnnotations: t.Annotations != nil})
	}
	return out, nil
}

// Call implements Client.
func (c *TasksClient) Call(ctx context.Context, name string, args map[string]any) (CallResult, error) {
	return c.CallProgress(ctx, name, args, nil)
}

// CallProgress implements Client. A task sends no notifications/progress
// (SEP-2663); every new statusMessage of a polled task is handed to
// onProgress instead, numbered from 1. Cancelling ctx sends tasks/cancel,
// waits (bounded) until the task is terminal, and returns ctx's error.
func (c *TasksClient) CallProgress(ctx context.Context, name string, args map[string]any, onProgress func(float64, string)) (CallResult, error) {
	if args == nil {
		args = map[string]any{}
	}
	res, rerr, err := c.request(ctx, "tools/call", map[string]any{"name": name, "arguments": args})
	if err != nil {
		return CallResult{}, err
	}
	if rerr != nil {
		return CallResult{RPCCode: rerr.Code, RPCMessage: rerr.Message}, nil
	}
	var head struct {
		ResultType     string `json:"resultType"`
		TaskID         string `json:"taskId"`
		PollIntervalMs int64  `json:"pollIntervalMs"`
		StatusMessage  string `json:"statusMessage"`
	}
	if err := json.Unmarshal(res, &head); err != nil {
		return CallResult{}, err
	}
	if head.ResultType != "task" {
		return toolResult(res)
	}
	if head.TaskID == "" {
		return CallResult{}, fmt.Errorf("a CreateTaskResult without taskId: %s", res)
	}
	c.mu.Lock()
	c.tasks++
	c.mu.Unlock()
	return c.await(ctx, head.TaskID, time.Duration(head.PollIntervalMs)*time.Millisecond, head.StatusMessage, onProgress)
}

// maxPollInterval caps the wait between polls whatever the server suggests.
const maxPollInterval = 2 * time.Second

// await polls the task until it is terminal.
// seed is the CreateTaskResult's statusMessage, which is no news.
func (c *TasksClient) await(ctx context.Context, id string, interval time.Duration, seed string, onProgress func(float64, string)) (CallResult, error) {
	if interval <= 0 || interval > maxPollInterval {
		interval = maxPollInterval
	}
	// The polls go on after a cancellation, on their own context, until the
	// task reports it ended.
	poll := context.WithoutCancel(ctx)
	var messages float64
	last := seed
	cancelled := false
	stopBy := time.Time{}
	for {
		if ctx.Err() != nil && !cancelled {
			cancelled = true
			stopBy = time.Now().Add(goneTimeout + 20*time.Second)
			if _, rerr, err := c.request(poll, "tasks/cancel", map[string]any{"taskId": id}); err != nil || rerr != nil {
				return CallResult{}, fmt.Errorf("tasks/cancel %s: %v %v", id, err, rerr)
			}
		}
		res, rerr, err := c.request(poll, "tasks/get", map[string]any{"taskId": id})
		if err != nil {
			return CallResult{}, err
		}
		if rerr != nil {
			return CallResult{}, fmt.Errorf("tasks/get %s: %d %s", id, rerr.Code, rerr.Message)
		}
		var t struct {
			Status        string          `json:"status"`
			StatusMessage string          `json:"statusMessage"`
			Result        json.RawMessage `json:"result"`
			Error         *rpcError       `json:"error"`
		}
		if err := json.Unmarshal(res, &t); err != nil {
			return CallResult{}, err
		}
		if t.StatusMessage != "" && t.StatusMessage != last && onProgress != nil && t.Status == "working" {
			last = t.StatusMessage
			messages++
			onProgress(messages, t.StatusMessage)
		}
		switch t.Status {
		case "completed":
			if cancelled {
				return CallResult{}, ctx.Err()
			}
			return toolResult(t.Result)
		case "failed":
			if t.Error == nil {
				return CallResult{}, fmt.Errorf("a failed task without error: %s", res)
			}
			if cancelled {
				return CallResult{}, ctx.Err()
			}
			return CallResult{RPCCode: t.Error.Code, RPCMessage: t.Error.Message}, nil
		case "cancelled":
			if cancelled {
				return CallResult{}, ctx.Err()
			}
			return CallResult{}, fmt.Errorf("task %s was cancelled by the server: %s", id, t.StatusMessage)
		case "working", "input_required":
		default:
			return CallResult{}, fmt.Errorf("task %s has status %q", id, t.Status)
		}
		if cancelled && time.Now().After(stopBy) {
			return CallResult{}, fmt.Errorf("task %s still %s long after tasks/cancel", id, t.Status)
		}
		t0 := time.NewTimer(interval)
		select {
		case <-t0.C:
		case <-ctx.Done():
			t0.Stop()
		}
	}
}

// toolResult decodes a tools/call result (synchronous or a task's inlined
// one).
func toolResult(raw json.RawMessage) (CallResult, error) {
	var r struct {
		IsError           bool            `json:"isError"`
		StructuredContent json.RawMessage `json:"structuredContent"`
		Content           []struct {
			Type string `json:"type"`
			Text string `json:"text"`
		} `json:"content"`
	}
	if err := json.Unmarshal(raw, &r); err != nil {
		return CallResult{}, fmt.Errorf("tool result %s: %w", raw, err)
	}
	out := CallResult{IsError: r.IsError}
	if len(r.StructuredContent) > 0 && string(r.StructuredContent) != "null" {
		out.Structured = r.StructuredContent
	}
	for _, c := range r.Content {
		if c.Type == "text" {
			out.Texts = append(out.Texts, c.Text)
		}
	}
	return out, nil
}

// Close implements Client: stdin EOF (stdio) or SIGTERM (HTTP), and the
// server's exit.
func (c *TasksClient) Close() error { return c.closer() }

var _ Client = (*TasksClient)(nil)
