package model

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// clientTimeout bounds every exchange of the test clients.
const clientTimeout = 10 * time.Second

// start starts a server with script and closes it when the test ends.
func start(t *testing.T, cfg Config) *Server {
	t.Helper()
	s, err := Start(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := s.Close(); err != nil {
			t.Error(err)
		}
	})
	return s
}

// post sends body to path and returns the status and the answer.
func post(t *testing.T, s *Server, path string, body any, header map[string]string) (int, []byte, http.Header) {
	t.Helper()
	var b []byte
	switch v := body.(type) {
	case []byte:
		b = v
	default:
		var err error
		if b, err = json.Marshal(v); err != nil {
			t.Fatal(err)
		}
	}
	req, err := http.NewRequest(http.MethodPost, s.URL()+path, bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	for k, v := range header {
		req.Header.Set(k, v)
	}
	resp, err := (&http.Client{Timeout: clientTimeout}).Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	out, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, out, resp.Header
}

// event is one parsed server-sent event.
type event struct {
	name string
	data map[string]any
}

// readSSE parses a text/event-stream body the way an SSE client does.
func readSSE(t *testing.T, body []byte) []event {
	t.Helper()
	var evs []event
	var cur event
	sc := bufio.NewScanner(bytes.NewReader(body))
	for sc.Scan() {
		line := sc.Text()
		switch {
		case line == "":
			if cur.data != nil {
				evs = append(evs, cur)
			}
			cur = event{}
		case strings.HasPrefix(line, "event: "):
			cur.name = strings.TrimPrefix(line, "event: ")
		case strings.HasPrefix(line, "data: "):
			if err := json.Unmarshal([]byte(strings.TrimPrefix(line, "data: ")), &cur.data); err != nil {
				t.Fatalf("event data %q: %v", line, err)
			}
		default:
			t.Fatalf("line %q is not SSE", line)
		}
	}
	if cur.data != nil {
		t.Fatalf("last event %v has no blank line after it", cur)
	}
	return evs
}

// get follows keys (string for maps, int for slices) into v.
func get(v any, keys ...any) any {
	for _, k := range keys {
		switch k := k.(type) {
		case string:
			m, _ := v.(map[string]any)
			v = m[k]
		case int:
			s, _ := v.([]any)
			if k >= len(s) {
				return nil
			}
			v = s[k]
		}
	}
	return v
}

var safeBuild = map[string]any{"build": "compile"}

// anthropicTurn is what a Messages API streaming client assembles: the
// tool_use (id, name, input) or the text, and the stop reason.
func anthropicStream(t *testing.T, body []byte) (id, name, input, text, stop string) {
	t.Helper()
	evs := readSSE(t, body)
	var names []string
	for _, e := range evs {
		names = append(names, e.name)
		if e.name != e.data["type"] {
			t.Errorf("event %q carries type %v", e.name, e.data["type"])
		}
		switch e.name {
		case "content_block_start":
			if get(e.data, "content_block", "type") == "tool_use" {
				id, name = get(e.data, "content_block", "id").(string), get(e.data, "content_block", "name").(string)
			}
		case "content_block_delta":
			if d, ok := get(e.data, "delta", "partial_json").(string); ok {
				input += d
			}
			if d, ok := get(e.data, "delta", "text").(string); ok {
				text += d
			}
		case "message_delta":
			stop, _ = get(e.data, "delta", "stop_reason").(string)
		}
	}
	want := []string{"message_start", "content_block_start", "content_block_delta", "content_block_stop", "message_delta", "message_stop"}
	if d := cmp.Diff(want, names); d != "" {
		t.Errorf("event sequence (-want +got):\n%s", d)
	}
	return id, name, input, text, stop
}

func TestAnthropicStreamFollowsTheScript(t *testing.T) {
	s := start(t, Config{Script: Script{Calls: []Call{
		{Name: "ToolSearch", Input: map[string]any{"query": "select:mcp__buildguard__reclazz_safe_build"}},
		{Name: "mcp__buildguard__reclazz_safe_build", Input: safeBuild},
	}, Final: "finished"}})
	tools := []any{map[string]any{"name": "ToolSearch", "input_schema": map[string]any{"type": "object"}}}
	msgs := []any{map[string]any{"role": "user", "content": "build it"}}
	var ids []string
	for i, want := range []struct{ name, input, stop string }{
		{"ToolSearch", `{"query":"select:mcp__buildguard__reclazz_safe_build"}`, "tool_use"},
		{"mcp__buildguard__reclazz_safe_build", `{"build":"compile"}`, "tool_use"},
	} {
		code, body, h := post(t, s, "/v1/messages?beta=true", map[string]any{"model": "claude-x", "stream": true, "messages": msgs, "tools": tools}, nil)
		if code != http.StatusOK || h.Get("Content-Type") != "text/event-stream" {
			t.Fatalf("turn %d: status %d, %s: %s", i, code, h.Get("Content-Type"), body)
		}
		id, name, input, _, stop := anthropicStream(t, body)
		if name != want.name || input != want.input || stop != want.stop || id == "" {
			t.Fatalf("turn %d: got %s %s %s (id %q), want %+v", i, name, input, stop, id, want)
		}
		ids = append(ids, id)
		msgs = append(msgs,
			map[string]any{"role": "assistant", "content": []any{map[string]any{"type": "tool_use", "id": id, "name": name, "input": json.RawMessage(input)}}},
			map[string]any{"role": "user", "content": []any{map[string]any{"type": "tool_result", "tool_use_id": id, "is_error": i == 1,
				"content": []any{map[string]any{"type": "text", "text": "result " + name}, map[string]any{"type": "tool_reference", "tool_name": "x"}}}}})
	}
	if ids[0] == ids[1] {
		t.Errorf("both calls have id %s", ids[0])
	}
	code, body, _ := post(t, s, "/v1/messages", map[string]any{"model": "claude-x", "stream": true, "messages": msgs, "tools": tools}, nil)
	if _, _, _, text, stop := anthropicStream(t, body); code != http.StatusOK || text != "finished" || stop != "end_turn" {
		t.Fatalf("last turn: status %d, text %q, stop %q", code, text, stop)
	}

	reqs := s.Requests()
	if len(reqs) != 3 {
		t.Fatalf("recorded %d requests, want 3", len(reqs))
	}
	for i, r := range reqs {
		if r.Seq != i+1 || r.Turn != i || r.Wire != Anthropic || !json.Valid(r.Body) {
			t.Errorf("request %d recorded as %+v", i, r)
		}
	}
	if reqs[0].Path != "/v1/messages?beta=true" || reqs[1].Answer != "call mcp__buildguard__reclazz_safe_build" || reqs[2].Answer != "text" {
		t.Errorf("recorded %q %q %q", reqs[0].Path, reqs[1].Answer, reqs[2].Answer)
	}
	got, err := LastResults(reqs)
	if err != nil {
		t.Fatal(err)
	}
	want := []ToolResult{
		{CallID: ids[0], Name: "ToolSearch", Text: "result ToolSearch\n{\"tool_name\":\"x\",\"type\":\"tool_reference\"}"},
		{CallID: ids[1], Name: "mcp__buildguard__reclazz_safe_build", IsError: true, Text: "result mcp__buildguard__reclazz_safe_build\n{\"tool_name\":\"x\",\"type\":\"tool_reference\"}"},
	}
	if d := cmp.Diff(want, got, cmp.FilterPath(func(p cmp.Path) bool { return p.Last().String() == ".Raw" }, cmp.Ignore())); d != "" {
		t.Errorf("tool results (-want +got):\n%s", d)
	}
}

func TestAnthropicWithoutToolsOrStreamAnswersText(t *testing.T) {
	s := start(t, Config{Script: Script{Calls: []Call{{Name: "ToolSearch"}}}})
	code, body, h := post(t, s, "/v1/messages", map[string]any{"model": "m", "messages": []any{map[string]any{"role": "user", "content": "title?"}}}, nil)
	var msg map[string]any
	if err := json.Unmarshal(body, &msg); err != nil || code != http.StatusOK || h.Get("Content-Type") != "application/json" {
		t.Fatalf("status %d, %s, %v: %s", code, h.Get("Content-Type"), err, body)
	}
	if get(msg, "content", 0, "text") != "done" || msg["stop_reason"] != "end_turn" || msg["type"] != "message" {
		t.Errorf("a request without tools got %s, want the final text done", body)
	}
	code, body, _ = post(t, s, "/v1/messages/count_tokens", map[string]any{"model": "m", "messages": []any{}}, nil)
	if err := json.Unmarshal(body, &msg); err != nil || code != http.StatusOK || msg["input_tokens"] == nil {
		t.Errorf("count_tokens: status %d: %s", code, body)
	}
}

// responsesStream is what a Responses API client assembles from the events.
func responsesStream(t *testing.T, body []byte) (item map[string]any, delta string) {
	t.Helper()
	evs := readSSE(t, body)
	if len(evs) < 4 || evs[0].name != "response.created" || evs[len(evs)-1].name != "response.completed" {
		t.Fatalf("events %v do not run from response.created to response.completed", evs)
	}
	for _, e := range evs {
		if e.name != e.data["type"] {
			t.Errorf("event %q carries type %v", e.name, e.data["type"])
		}
		if e.name == "response.output_text.delta" {
			delta += e.data["delta"].(string)
		}
		if e.name == "response.output_item.done" {
			item = e.data["item"].(map[string]any)
		}
	}
	last := evs[len(evs)-1].data
	if d := cmp.Diff(item, get(last, "response", "output", 0)); d != "" || get(last, "response", "status") != "completed" || get(last, "response", "usage", "total_tokens") == nil {
		t.Errorf("response.completed does not hold the done item and usage: %v", last)
	}
	return item, delta
}

func TestOpenAIResponsesFollowsTheScript(t *testing.T) {
	s := start(t, Config{Script: Script{Calls: []Call{{Name: "reclazz_safe_build", Namespace: "mcp__buildguard", Input: safeBuild}}, Final: "ok"}})
	tools := []any{map[string]any{"type": "namespace", "name": "mcp__buildguard"}}
	input := []any{map[string]any{"type": "message", "role": "user", "content": []any{map[string]any{"type": "input_text", "text": "build"}}}}
	code, body, _ := post(t, s, "/v1/responses", map[string]any{"model": "gpt-x", "stream": true, "input": input, "tools": tools}, nil)
	if code != http.StatusOK {
		t.Fatalf("status %d: %s", code, body)
	}
	item, _ := responsesStream(t, body)
	if item["type"] != "function_call" || item["name"] != "reclazz_safe_build" || item["namespace"] != "mcp__buildguard" ||
		item["arguments"] != `{"build":"compile"}` || item["call_id"] == "" {
		t.Fatalf("first turn item %v, want the scripted function_call", item)
	}
	callID := item["call_id"].(string)
	input = append(input, item,
		map[string]any{"type": "function_call_output", "call_id": callID, "output": "Wall time: 1 seconds\nOutput:\n{\"outcome\":\"failed\"}"})
	code, body, _ = post(t, s, "/v1/responses", map[string]any{"model": "gpt-x", "stream": true, "input": input, "tools": tools}, nil)
	item, delta := responsesStream(t, body)
	if code != http.StatusOK || item["type"] != "message" || get(item, "content", 0, "text") != "ok" || delta != "ok" {
		t.Fatalf("second turn: status %d, item %v, delta %q", code, item, delta)
	}
	got, err := LastResults(s.Requests())
	if err != nil {
		t.Fatal(err)
	}
	want := []ToolResult{{CallID: callID, Name: "mcp__buildguard/reclazz_safe_build", Text: "Wall time: 1 seconds\nOutput:\n{\"outcome\":\"failed\"}"}}
	if d := cmp.Diff(want, got, cmp.FilterPath(func(p cmp.Path) bool { return p.Last().String() == ".Raw" }, cmp.Ignore())); d != "" {
		t.Errorf("tool results (-want +got):\n%s", d)
	}
	if text := openAIOutputText(json.RawMessage(`[{"type":"input_text","text":"a"},{"type":"input_image","image_url":"u"}]`)); text != "a\n{\"type\":\"input_image\",\"image_url\":\"u\"}" {
		t.Errorf("content items read as %q", text)
	}
}

func TestGeminiStreamsCallsAndAnswersSchemas(t *testing.T) {
	s := start(t, Config{Script: Script{Calls: []Call{{Name: "mcp_buildguard_reclazz_safe_build", Input: safeBuild}}, Final: "built"}})
	tools := []any{map[string]any{"functionDeclarations": []any{map[string]any{"name": "mcp_buildguard_reclazz_safe_build"}}}}
	contents := []any{map[string]any{"role": "user", "parts": []any{map[string]any{"text": "build"}}}}

	// The router: generateContent with a response schema and no tools.
	router := map[string]any{"contents": contents, "generationConfig": map[string]any{"responseMimeType": "application/json",
		"responseJsonSchema": map[string]any{"type": "object", "required": []any{"reasoning", "model_choice"}, "properties": map[string]any{
			"reasoning": map[string]any{"type": "string"}, "model_choice": map[string]any{"type": "string", "enum": []any{"flash", "pro"}},
			"unasked": map[string]any{"type": "integer"}}}}}
	code, body, _ := post(t, s, "/v1beta/models/gemini-2.5-flash-lite:generateContent", router, nil)
	var resp map[string]any
	if err := json.Unmarshal(body, &resp); err != nil || code != http.StatusOK {
		t.Fatalf("router: status %d, %v: %s", code, err, body)
	}
	var choice map[string]any
	if err := json.Unmarshal([]byte(get(resp, "candidates", 0, "content", "parts", 0, "text").(string)), &choice); err != nil {
		t.Fatalf("router answer %s is not JSON: %v", body, err)
	}
	if d := cmp.Diff(map[string]any{"reasoning": "scripted", "model_choice": "flash"}, choice); d != "" {
		t.Errorf("router answer (-want +got):\n%s", d)
	}

	code, body, _ = post(t, s, "/v1beta/models/gemini-2.5-pro:streamGenerateContent?alt=sse", map[string]any{"contents": contents, "tools": tools}, nil)
	evs := readSSE(t, body)
	if code != http.StatusOK || len(evs) != 1 {
		t.Fatalf("status %d, events %v", code, evs)
	}
	fc := get(evs[0].data, "candidates", 0, "content", "parts", 0, "functionCall")
	if d := cmp.Diff(map[string]any{"name": "mcp_buildguard_reclazz_safe_build", "args": map[string]any{"build": "compile"}}, fc); d != "" ||
		evs[0].data["modelVersion"] != "gemini-2.5-pro" {
		t.Fatalf("first turn (-want +got):\n%s\n%v", d, evs[0].data)
	}
	contents = append(contents,
		map[string]any{"role": "model", "parts": []any{map[string]any{"functionCall": fc}}},
		map[string]any{"role": "user", "parts": []any{map[string]any{"functionResponse": map[string]any{"id": "c1",
			"name": "mcp_buildguard_reclazz_safe_build", "response": map[string]any{"error": "MCP tool reported an error: {}"}}}}})
	_, body, _ = post(t, s, "/v1beta/models/gemini-2.5-pro:streamGenerateContent?alt=sse", map[string]any{"contents": contents, "tools": tools}, nil)
	if evs := readSSE(t, body); get(evs[0].data, "candidates", 0, "content", "parts", 0, "text") != "built" {
		t.Fatalf("second turn %v, want the final text", evs)
	}
	got, err := LastResults(s.Requests())
	if err != nil {
		t.Fatal(err)
	}
	want := []ToolResult{{CallID: "c1", Name: "mcp_buildguard_reclazz_safe_build", Text: "MCP tool reported an error: {}", Raw: json.RawMessage(`{"error":"MCP tool reported an error: {}"}`)}}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("tool results (-want +got):\n%s", d)
	}
	if r := s.Requests(); r[0].Answer != "schema" || r[1].Answer != "call mcp_buildguard_reclazz_safe_build" || r[2].Turn != 1 {
		t.Errorf("recorded %+v", r)
	}
}

func TestBadRequestsAreRecordedAndRefused(t *testing.T) {
	s := start(t, Config{MaxBody: 1 << 10})
	var gz bytes.Buffer
	zw := gzip.NewWriter(&gz)
	_, _ = zw.Write([]byte(`{"model":"m","messages":[]}`))
	_ = zw.Close()
	for _, c := range []struct {
		path   string
		body   []byte
		header map[string]string
		code   int
		answer string
	}{
		{"/v1/other", []byte(`{}`), nil, http.StatusNotFound, "error: not served"},
		{"/v1/messages", []byte(`not json`), nil, http.StatusBadRequest, "error: the body is not JSON"},
		{"/v1/messages", bytes.Repeat([]byte(" "), 2<<10), nil, http.StatusBadRequest, "error: reading body: http: request body too large"},
		{"/v1/messages", gz.Bytes(), map[string]string{"Content-Encoding": "gzip"}, http.StatusOK, "text"},
		{"/v1/messages", []byte(`{}`), map[string]string{"Content-Encoding": "zstd"}, http.StatusBadRequest, `error: content encoding "zstd" is not served`},
		{"/v1/responses", []byte(`{"input":3}`), nil, http.StatusOK, "text"},
		{"/v1beta/models/m:streamGenerateContent", []byte(`{"contents":"x"}`), nil, http.StatusBadRequest, "error: reading a generateContent request: json: cannot unmarshal string"},
	} {
		code, body, _ := post(t, s, c.path, c.body, c.header)
		if code != c.code {
			t.Errorf("%s %q: status %d, want %d: %s", c.path, c.body, code, c.code, body)
		}
		r := s.Requests()
		if got := r[len(r)-1].Answer; !strings.HasPrefix(got, c.answer) {
			t.Errorf("%s: recorded answer %q, want %q", c.path, got, c.answer)
		}
	}
	if _, err := LastResults(s.Requests()); err == nil {
		t.Error("LastResults found a tool result where no request held one")
	}
}

func TestCloseEndsTheServer(t *testing.T) {
	s, err := Start(Config{})
	if err != nil {
		t.Fatal(err)
	}
	url := s.URL()
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatalf("second Close: %v", err)
	}
	resp, err := (&http.Client{Timeout: clientTimeout}).Post(url+"/v1/messages", "application/json", strings.NewReader("{}"))
	if err == nil {
		resp.Body.Close()
		t.Fatal("the server still answers after Close")
	}
}
