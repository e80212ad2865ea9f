package httpfront_test

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"runtime"
	"runtime/pprof"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/hashicorp/go-hclog"
	"github.com/rogpeppe/go-internal/txtar"

	"github.com/buildguard/buildguard/harness/mcptest"
	"github.com/buildguard/buildguard/internal/testsupport/lockedbuf"
	"github.com/buildguard/buildguard/internal/testsupport/wait"
	"github.com/buildguard/buildguard/mcp"
	"github.com/buildguard/buildguard/mcp/httpfront"
	"github.com/buildguard/buildguard/mcp/protocol"
)

// httpFixture is a server with a fake caller behind a real loopback
// listener.
type httpFixture struct {
	t      *testing.T
	caller *mcptest.FakeCaller
	ts     *httptest.Server
	client *http.Client
	logs   *lockedbuf.Buffer
	port   string
}

func newHTTPFixture(t *testing.T, caller *mcptest.FakeCaller) *httpFixture {
	t.Helper()
	logs := &lockedbuf.Buffer{}
	srv := mcp.NewServer(mcp.Config{Caller: caller, Version: "test", Logger: mcptest.TestLogger(logs)})
	h := srv.HTTPHandler(testToken)
	ts := httptest.NewServer(h)
	tr := &http.Transport{DisableKeepAlives: true}
	f := &httpFixture{t: t, caller: caller, ts: ts, client: &http.Client{Transport: tr, Timeout: 20 * time.Second}, logs: logs}
	_, f.port, _ = net.SplitHostPort(ts.Listener.Addr().String())
	t.Cleanup(func() {
		h.Close()
		ts.Close()
		tr.CloseIdleConnections()
	})
	return f
}

// post sends body to /mcp with the token and the headers every streamable
// HTTP client sends, plus extra (name, value pairs).
func (f *httpFixture) post(ctx context.Context, body string, extra ...string) (int, string) {
	f.t.Helper()
	return mcptest.Post(f.t, ctx, f.client, f.ts.URL+httpfront.HTTPPath, testToken, body, extra...)
}

// TestHTTPTranscripts sends the requests of each testdata/http/*.txtar to a
// served handler and compares status and body with the expected response,
// byte for byte. A request file is a request line, header lines, a blank
// line and the body; a response file is the status code and the body. $TOKEN
// and $PORT stand for the token and the server's port.
func TestHTTPTranscripts(t *testing.T) {
	checkNoLeakedGoroutines(t)
	files, err := filepath.Glob("testdata/http/*.txtar")
	if err != nil || len(files) == 0 {
		t.Fatalf("no HTTP transcripts: %v", err)
	}
	for _, file := range files {
		t.Run(strings.TrimSuffix(filepath.Base(file), ".txtar"), func(t *testing.T) {
			ar, err := txtar.ParseFile(file)
			if err != nil {
				t.Fatal(err)
			}
			f := newHTTPFixture(t, &mcptest.FakeCaller{})
			expand := strings.NewReplacer("$TOKEN", testToken, "$PORT", f.port).Replace
			changed := false
			for i := 0; i < len(ar.Files); i++ {
				if !strings.HasSuffix(ar.Files[i].Name, ".request") {
					continue
				}
				got := f.exchange(t, expand(string(ar.Files[i].Data)))
				name := strings.TrimSuffix(ar.Files[i].Name, ".request") + ".response"
				if i+1 >= len(ar.Files) || ar.Files[i+1].Name != name {
					t.Fatalf("%s has no %s after it", ar.Files[i].Name, name)
				}
				if *update {
					ar.Files[i+1].Data = []byte(got)
					changed = true
					continue
				}
				if diff := cmp.Diff(string(ar.Files[i+1].Data), got); diff != "" {
					t.Errorf("%s (-want +got):\n%s", name, diff)
				}
			}
			if changed {
				if err := os.WriteFile(file, txtar.Format(ar), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			if logs := f.logs.String(); logs != "" {
				t.Errorf("log output at warn level:\n%s", logs)
			}
			if strings.Contains(f.logs.String(), testToken) {
				t.Error("the token appeared in the log")
			}
		})
	}
}

// exchange sends one transcript request and renders the response as
// "STATUS\nBODY".
func (f *httpFixture) exchange(t *testing.T, spec string) string {
	t.Helper()
	head, body, _ := strings.Cut(spec, "\n\n")
	lines := strings.Split(head, "\n")
	method, target, ok := strings.Cut(lines[0], " ")
	if !ok {
		t.Fatalf("bad request line %q", lines[0])
	}
	req, err := http.NewRequest(method, f.ts.URL+target, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range lines[1:] {
		k, v, ok := strings.Cut(l, ": ")
		if !ok {
			t.Fatalf("bad header line %q", l)
		}
		if strings.EqualFold(k, "Host") {
			req.Host = v
			continue
		}
		req.Header.Add(k, v)
	}
	resp, err := f.client.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, target, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	if len(b) > 0 && resp.Header.Get("Content-Type") != "application/json" {
		t.Errorf("%s %s: Content-Type %q for a body", method, target, resp.Header.Get("Content-Type"))
	}
	if resp.StatusCode == http.StatusUnauthorized && resp.Header.Get("WWW-Authenticate") != "Bearer" {
		t.Errorf("401 without WWW-Authenticate: Bearer")
	}
	mcptest.AssertOnlyJSONRPC(t, b)
	return strconv.Itoa(resp.StatusCode) + "\n" + string(b)
}

// TestHTTPBodyLimit: a body of exactly httpfront.MaxHTTPBody bytes is served, one more
// byte is 413 with a JSON-RPC error.
func TestHTTPBodyLimit(t *testing.T) {
	t.Parallel()
	f := newHTTPFixture(t, &mcptest.FakeCaller{})
	ping := `{"jsonrpc":"2.0","id":1,"method":"ping"}`
	fit := ping + strings.Repeat(" ", httpfront.MaxHTTPBody-len(ping))
	if status, body := f.post(context.Background(), fit); status != http.StatusOK || body != `{"jsonrpc":"2.0","id":1,"result":{}}`+"\n" {
		t.Errorf("body of %d bytes: %d %s", len(fit), status, body)
	}
	status, body := f.post(context.Background(), fit+" ")
	if status != http.StatusRequestEntityTooLarge || body != `{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"Request body exceeds 1048576 bytes"}}`+"\n" {
		t.Errorf("body of %d bytes: %d %s", len(fit)+1, status, body)
	}
}

// TestHTTPAnswersLikeStdio: deeply nested arguments are -32602 over both
// transports alike; a null progressToken is no token (the answer is plain
// JSON, not an event stream); a protocol version after every one served is
// "unsupported protocol version" with the versions served; Host names
// differing only in case are one name, checked once (docs/http.md#3).
func TestHTTPAnswersLikeStdio(t *testing.T) {
	t.Parallel()
	f := newHTTPFixture(t, &mcptest.FakeCaller{})
	deep := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"reclazz_status","arguments":{"x":` +
		strings.Repeat(`{"a":`, 998) + "1" + strings.Repeat("}", 998) + `}}}`
	want := `{"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"params must not nest deeper than 64 levels"}}` + "\n"
	if s, b := f.post(context.Background(), deep, "MCP-Protocol-Version", protocol.Version20250618); s != http.StatusOK || b != want {
		t.Errorf("deep arguments over HTTP: %d %s", s, b)
	}
	var out bytes.Buffer
	srv := mcp.NewServer(mcp.Config{Caller: &mcptest.FakeCaller{}, Version: "test"})
	if err := srv.ServeStdio(context.Background(), strings.NewReader(deep+"\n"), &out); err != nil || out.String() != want {
		t.Errorf("deep arguments over stdio: %v %s", err, out.String())
	}

	req, _ := http.NewRequest(http.MethodPost, f.ts.URL+httpfront.HTTPPath, strings.NewReader(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"reclazz_status","_meta":{"progressToken":null}}}`))
	req.Header.Set("Authorization", "Bearer "+testToken)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("MCP-Protocol-Version", protocol.Version20251125)
	resp, err := f.client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if ct := resp.Header.Get("Content-Type"); resp.StatusCode != http.StatusOK || ct != "application/json" {
		t.Errorf("a call with a null progressToken: %d %s, want plain JSON", resp.StatusCode, ct)
	}

	for _, v := range []string{"2099-01-01", "2026-07-29"} {
		s, b := f.post(context.Background(), `{"jsonrpc":"2.0","id":3,"method":"tools/list"}`, "MCP-Protocol-Version", v)
		want := `{"jsonrpc":"2.0","id":3,"error":{"code":-32022,"message":"unsupported protocol version","data":{"supported":["2026-07-28","2025-11-25","2025-06-18","2025-03-26","2024-11-05"],"requested":"` + v + `"}}}` + "\n"
		if s != http.StatusBadRequest || b != want {
			t.Errorf("version %s: %d %s", v, s, b)
		}
	}

	for _, host := range []string{"LOCALHOST", "LocalHost", "localhost", "127.0.0.1"} {
		got := f.exchange(t, "POST "+httpfront.HTTPPath+"\nHost: "+host+":"+f.port+"\nAuthorization: Bearer "+testToken+
			"\nContent-Type: application/json\nAccept: application/json, text/event-stream\n\n"+`{"jsonrpc":"2.0","id":4,"method":"ping"}`)
		if want := "200\n" + `{"jsonrpc":"2.0","id":4,"result":{}}` + "\n"; got != want {
			t.Errorf("Host %s: %q, want %q", host, got, want)
		}
	}
}

// TestHTTP20260728RemovedMethods: a 2026-07-28 request (by its
// MCP-Protocol-Version header) for a method that revision removed is HTTP
// 404 with -32601, _meta or not, and so is one for a method the server does
// not know; the same methods keep working for the versions that have them;
// a 2026-07-28 request without its _meta version and capabilities is 400
// with -32602 naming what is missing (docs/http.md#4).
func TestHTTP20260728RemovedMethods(t *testing.T) {
	t.Parallel()
	f := newHTTPFixture(t, &mcptest.FakeCaller{})
	meta := `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}`
	for _, c := range []struct{ method, params string }{
		{"initialize", `{"protocolVersion":"2026-07-28",` + meta + `}`},
		{"ping", `{` + meta + `}`},
		{"ping", `{}`},
		{"logging/setLevel", `{"level":"info",` + meta + `}`},
		{"resources/subscribe", `{"uri":"x",` + meta + `}`},
		{"resources/unsubscribe", `{"uri":"x",` + meta + `}`},
	} {
		s, b := f.post(context.Background(), `{"jsonrpc":"2.0","id":9,"method":"`+c.method+`","params":`+c.params+`}`,
			"MCP-Protocol-Version", protocol.Version20260728, "Mcp-Method", c.method)
		want := `{"jsonrpc":"2.0","id":9,"error":{"code":-32601,"message":"Method not found: ` + c.method + `"}}` + "\n"
		if s != http.StatusNotFound || b != want {
			t.Errorf("%s %s: %d %s", c.method, c.params, s, b)
		}
	}
	if s, b := f.post(context.Background(), `{"jsonrpc":"2.0","id":10,"method":"ping"}`, "MCP-Protocol-Version", protocol.Version20251125); s != http.StatusOK || b != `{"jsonrpc":"2.0","id":10,"result":{}}`+"\n" {
		t.Errorf("ping at 2025-11-25: %d %s", s, b)
	}
	for params, missing := range map[string]string{
		`{}`: "io.modelcontextprotocol/protocolVersion, io.modelcontextprotocol/clientCapabilities",
		`{"_meta":{"io.modelcontextprotocol/clientCapabilities":{}}}`:                                             "io.modelcontextprotocol/protocolVersion",
		`{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}`:                                      "io.modelcontextprotocol/clientCapabilities",
		`{"_meta":{"io.modelcontextprotocol/protocolVersion":7,"io.modelcontextprotocol/clientCapabilities":[]}}`: "io.modelcontextprotocol/protocolVersion, io.modelcontextprotocol/clientCapabilities",
	} {
		s, b := f.post(context.Background(), `{"jsonrpc":"2.0","id":11,"method":"tools/list","params":`+params+`}`,
			"MCP-Protocol-Version", protocol.Version20260728, "Mcp-Method", "tools/list")
		want := `{"jsonrpc":"2.0","id":11,"error":{"code":-32602,"message":"Invalid params: missing _meta keys: ` + missing + `"}}` + "\n"
		if s != http.StatusBadRequest || b != want {
			t.Errorf("_meta %s: %d %s", params, s, b)
		}
	}
	s, b := f.post(context.Background(), `{"jsonrpc":"2.0","id":12,"method":"no/such","params":{`+meta+`}}`,
		"MCP-Protocol-Version", protocol.Version20260728, "Mcp-Method", "no/such")
	if want := `{"jsonrpc":"2.0","id":12,"error":{"code":-32601,"message":"Method not found: no/such"}}` + "\n"; s != http.StatusNotFound || b != want {
		t.Errorf("an unknown method at 2026-07-28: %d %s", s, b)
	}
}

// TestHTTPSameAsStdio: every tools/call of the version transcripts gets the
// same answer over HTTP (one request each, MCP-Protocol-Version header) as
// in a stdio session initialized at that version.
func TestHTTPSameAsStdio(t *testing.T) {
	t.Parallel()
	calls := []string{
		`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"reclazz_status","arguments":{"port":"4000"}}}`,
		`{"jsonrpc":"2.0","id":"two","method":"tools/call","params":{"name":"reclazz_status","arguments":{"timeoutMs":"bad"}}}`,
		`{"jsonrpc":"2.0","id":3.0,"method":"tools/call","params":{"name":"reclazz_nope","arguments":{}}}`,
		`{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":7}}`,
		`{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"reclazz_status","arguments":[]}}`,
		`{"jsonrpc":"2.0","id":6,"method":"tools/call","params":{"name":"reclazz_scan","arguments":{"mode":"broken"}}}`,
		`{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"reclazz_scan","arguments":{"mode":"panic"}}}`,
		`{"jsonrpc":"2.0","id":8,"method":"tools/list"}`,
		`{"jsonrpc":"2.0","id":9,"method":"ping"}`,
	}
	f := newHTTPFixture(t, &mcptest.FakeCaller{})
	for _, v := range mcp.SupportedVersions() {
		in := `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"` + v + `"}}` + "\n" + strings.Join(calls, "\n") + "\n"
		var out bytes.Buffer
		srv := mcp.NewServer(mcp.Config{Caller: &mcptest.FakeCaller{}, Version: "test", Logger: mcptest.TestLogger(&lockedbuf.Buffer{})})
		if err := srv.ServeStdio(context.Background(), strings.NewReader(in), &out); err != nil {
			t.Fatal(err)
		}
		sc := bufio.NewScanner(&out)
		sc.Buffer(nil, 1<<20)
		sc.Scan() // initialize
		for _, c := range calls {
			sc.Scan()
			status, body := f.post(context.Background(), c, "MCP-Protocol-Version", v)
			if status != http.StatusOK || body != sc.Text()+"\n" {
				t.Errorf("%s at %s:\nstdio %s\nhttp  %d %s", c, v, sc.Text(), status, body)
			}
		}
	}
	if strings.Contains(f.logs.String(), "fake caller panicked") == false {
		t.Error("the panic over HTTP was not logged")
	}
}

// checkNoLeakedGoroutines fails t when, 5 s after the test, more goroutines
// run than before it (the test must not be parallel).
func checkNoLeakedGoroutines(t *testing.T) {
	before := runtime.NumGoroutine()
	t.Cleanup(func() {
		wait.Until(5*time.Second, func() bool { return runtime.NumGoroutine() <= before })
		if n := runtime.NumGoroutine(); n > before {
			var b strings.Builder
			_ = pprof.Lookup("goroutine").WriteTo(&b, 1)
			t.Errorf("%d goroutines after the test, %d before:\n%s", n, before, b.String())
		}
	})
}

// TestHTTPTokenNeverLogged: at trace level, with the SDK's own logging, a
// session over HTTP (token in the header, in the query, and a wrong one)
// logs something but never the token.
func TestHTTPTokenNeverLogged(t *testing.T) {
	t.Parallel()
	logs := &lockedbuf.Buffer{}
	srv := mcp.NewServer(mcp.Config{Caller: &mcptest.FakeCaller{}, Version: "test", Logger: hclog.New(&hclog.LoggerOptions{Name: "mcp", Level: hclog.Trace, Output: logs, Color: hclog.ColorOff})})
	h := srv.HTTPHandler(testToken)
	ts := httptest.NewServer(h)
	defer ts.Close()
	defer h.Close()
	client := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}, Timeout: 20 * time.Second}
	for _, c := range []struct{ query, auth, body string }{
		{"", "Bearer " + testToken, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25"}}`},
		{"?token=" + testToken, "", `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"reclazz_scan","arguments":{"mode":"broken"}}}`},
		{"?token=" + testToken + "x", "Bearer " + testToken + "x", `{"jsonrpc":"2.0","id":3,"method":"ping"}`},
		{"?token=" + testToken, "", `{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"reclazz_scan","arguments":{"mode":"panic"}}}`},
	} {
		req, _ := http.NewRequest(http.MethodPost, ts.URL+httpfront.HTTPPath+c.query, strings.NewReader(c.body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		if c.auth != "" {
			req.Header.Set("Authorization", c.auth)
		}
		resp, err := client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
	}
	got := logs.String()
	if got == "" {
		t.Fatal("nothing logged at trace level: the check proves nothing")
	}
	if strings.Contains(got, testToken) {
		t.Errorf("the token appeared in the log:\n%s", got)
	}
}

// TestHTTPHeaderRules: a 2026-07-28 request's Mcp-Method header is matched
// against its body (SEP-2243, docs/http.md#6.1): the header's name in any
// case and its value with surrounding white space are accepted; a missing,
// another or an upper-case method is HTTP 400 with -32020.
func TestHTTPHeaderRules(t *testing.T) {
	t.Parallel()
	f := newHTTPFixture(t, &mcptest.FakeCaller{})
	host := strings.TrimPrefix(f.ts.URL, "http://")
	meta := `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}`
	body := `{"jsonrpc":"2.0","id":3,"method":"tools/list","params":{` + meta + `}}`
	// raw sends the header line exactly as written, which net/http's client
	// would put in canonical case.
	raw := func(header string) (int, string) {
		t.Helper()
		conn, err := net.DialTimeout("tcp", host, 5*time.Second)
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close()
		_ = conn.SetDeadline(time.Now().Add(10 * time.Second))
		var req strings.Builder
		fmt.Fprintf(&req, "POST %s HTTP/1.1\r\nHost: %s\r\nAuthorization: Bearer %s\r\n", httpfront.HTTPPath, host, testToken)
		req.WriteString("Content-Type: application/json\r\nAccept: application/json, text/event-stream\r\nMCP-Protocol-Version: 2026-07-28\r\n")
		if header != "" {
			req.WriteString(header + "\r\n")
		}
		fmt.Fprintf(&req, "Content-Length: %d\r\nConnection: close\r\n\r\n%s", len(body), body)
		if _, err := io.WriteString(conn, req.String()); err != nil {
			t.Fatal(err)
		}
		resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
		if err != nil {
			t.Fatalf("reading the answer to %q: %v", header, err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	for _, h := range []string{"mcp-method: tools/list", "MCP-METHOD: tools/list", "Mcp-Method: \t tools/list \t"} {
		if s, b := raw(h); s != http.StatusOK || !strings.Contains(b, `"tools":[`) {
			t.Errorf("%q: %d %s", h, s, b)
		}
	}
	for _, h := range []string{"", "Mcp-Method: tools/call", "Mcp-Method: TOOLS/LIST"} {
		if s, b := raw(h); s != http.StatusBadRequest || !strings.Contains(b, `"code":-32020`) {
			t.Errorf("%q: %d %s", h, s, b)
		}
	}
}
