package httpfront_test

import (
	"bytes"
	"context"
	"encoding/json"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/buildguard/buildguard/harness/mcptest"
	"github.com/buildguard/buildguard/internal/testsupport/lockedbuf"
	"github.com/buildguard/buildguard/mcp"
	"github.com/buildguard/buildguard/service/tools"
)

// FuzzHTTPRequest drives the HTTP front with arbitrary bodies, header values
// and query strings: every answer must come within the request's bound, with
// a status the front gives, and any body must be one JSON-RPC response whose
// error is never code 0.
func FuzzHTTPRequest(f *testing.F) {
	for _, seed := range []struct{ body, version, method, query string }{
		{`{"jsonrpc":"2.0","id":1,"method":"ping"}`, "", "", "token=" + testToken},
		{`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"reclazz_status","arguments":{"port":"1"}}}`, "2025-11-25", "", ""},
		{`{"jsonrpc":"2.0","id":"x","method":"tools/call","params":{"name":"reclazz_verify_batch","arguments":{}}}`, "2025-06-18", "", ""},
		{`{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"reclazz_scan","arguments":{},"_meta":{"progressToken":"p"}}}`, "2025-11-25", "", ""},
		{`{"jsonrpc":"2.0","id":2,"method":"server/discover","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}`, "2026-07-28", "server/discover", ""},
		{`{"jsonrpc":"2.0","id":3,"method":"initialize","params":{"protocolVersion":"2025-11-25"}}`, "", "", "token=a&token=b"},
		{`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":1}}`, "", "", ""},
		{`[{"jsonrpc":"2.0","id":1,"method":"ping"}]`, "", "", ""},
		{"{\"jsonrpc\":\"2.0\",\"id\":1e999,\"method\":\"ping\xff\"}", "2024-11-05", "ping", "%zz"},
	} {
		f.Add([]byte(seed.body), seed.version, seed.method, seed.query)
	}
	closed := make(chan tools.Result)
	close(closed)
	srv := mcp.NewServer(mcp.Config{Caller: &mcptest.FakeCaller{Release: closed}, Version: "test", Logger: mcptest.TestLogger(&lockedbuf.Buffer{})})
	h := srv.HTTPHandler(testToken)
	defer h.Close()
	local := &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 4711}
	allowed := map[int]bool{200: true, 202: true, 204: true, 400: true, 401: true, 404: true, 413: true, 415: true, 500: true}
	f.Fuzz(func(t *testing.T, body []byte, version, mcpMethod, query string) {
		ctx, cancel := context.WithTimeout(context.WithValue(context.Background(), http.LocalAddrContextKey, net.Addr(local)), 5*time.Second)
		defer cancel()
		req := httptest.NewRequest(http.MethodPost, "http://127.0.0.1:4711/mcp", bytes.NewReader(body)).WithContext(ctx)
		req.URL.RawQuery = query
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		if !strings.Contains(query, "token=") {
			req.Header.Set("Authorization", "Bearer "+testToken)
		}
		if version != "" {
			req.Header.Set("MCP-Protocol-Version", version)
		}
		if mcpMethod != "" {
			req.Header.Set("Mcp-Method", mcpMethod)
		}
		rec := httptest.NewRecorder()
		start := time.Now()
		h.ServeHTTP(rec, req)
		if time.Since(start) > 4*time.Second {
			t.Fatalf("answer took %s", time.Since(start))
		}
		if !allowed[rec.Code] {
			t.Fatalf("status %d for %q: %s", rec.Code, body, rec.Body.Bytes())
		}
		out := bytes.TrimSpace(rec.Body.Bytes())
		if rec.Header().Get("Content-Type") == "text/event-stream" {
			// A tools/call with a progressToken: every event's data is
			// one JSON-RPC message.
			for _, ev := range bytes.Split(out, []byte("\n\n")) {
				data, ok := bytes.CutPrefix(ev, []byte("event: message\ndata: "))
				if !ok || !json.Valid(data) {
					t.Fatalf("bad event %q", ev)
				}
			}
			return
		}
		if len(out) == 0 {
			if rec.Code == 200 || rec.Code >= 400 {
				t.Fatalf("status %d without a body", rec.Code)
			}
			return
		}
		var m struct {
			JSONRPC string          `json:"jsonrpc"`
			ID      json.RawMessage `json:"id"`
			Result  json.RawMessage `json:"result"`
			Error   *struct {
				Code int64 `json:"code"`
			} `json:"error"`
		}
		if err := json.Unmarshal(out, &m); err != nil || m.JSONRPC != "2.0" || m.ID == nil || (m.Result == nil) == (m.Error == nil) {
			t.Fatalf("not one JSON-RPC response: %s", out)
		}
		if m.Error != nil && m.Error.Code == 0 {
			t.Fatalf("error code 0: %s", out)
		}
	})
}
