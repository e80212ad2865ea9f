package mcptask

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdkmcp "github.com/modelcontextprotocol/go-sdk/mcp"
)

// rawResult keeps a result's whole JSON, to check fields a typed result
// would hide.
type rawResult struct {
	sdkmcp.ResultBase
	fields map[string]json.RawMessage
}

func (r *rawResult) UnmarshalJSON(b []byte) error { return json.Unmarshal(b, &r.fields) }

// serve starts an SDK server with the extension over in-memory transports
// and connects a go-sdk client, declaring the extension or not, at
// 2026-07-28.
func serve(t *testing.T, store *Store, declare bool, mw ...sdkmcp.Middleware) *sdkmcp.ClientSession {
	t.Helper()
	caps := &sdkmcp.ServerCapabilities{Tools: &sdkmcp.ToolCapabilities{}}
	Advertise(caps)
	srv := sdkmcp.NewServer(&sdkmcp.Implementation{Name: "t", Version: "1"}, &sdkmcp.ServerOptions{Capabilities: caps})
	ext := &Extension{Store: store}
	if err := ext.Register(srv); err != nil {
		t.Fatal(err)
	}
	srv.AddReceivingMiddleware(append([]sdkmcp.Middleware{ext.Middleware}, mw...)...)
	st, ct := sdkmcp.NewInMemoryTransports()
	ctx := context.Background()
	ss, err := srv.Connect(ctx, st, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = ss.Close() })
	ccaps := &sdkmcp.ClientCapabilities{}
	if declare {
		ccaps.AddExtension(ExtensionID, nil)
	}
	cl := sdkmcp.NewClient(&sdkmcp.Implementation{Name: "c", Version: "1"}, &sdkmcp.ClientOptions{Capabilities: ccaps})
	for _, m := range []string{MethodGet, MethodUpdate, MethodCancel, "tasks/result", "tasks/list"} {
		if err := sdkmcp.AddSendingCustomMethod[*UpdateParams, *rawResult](cl, m); err != nil {
			t.Fatal(err)
		}
	}
	cs, err := cl.Connect(ctx, ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cs.Close() })
	return cs
}

func call(cs *sdkmcp.ClientSession, method string, p *UpdateParams) (map[string]json.RawMessage, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	r, err := sdkmcp.CallCustomMethod[*UpdateParams, *rawResult](ctx, cs, method, p)
	if err != nil {
		return nil, err
	}
	return r.fields, nil
}

func code(err error) int64 {
	var e *jsonrpc.Error
	if errors.As(err, &e) {
		return e.Code
	}
	return 0
}

func ptr[T any](v T) *T { return &v }

func TestExtensionAdvertisedInDiscover(t *testing.T) {
	cs := serve(t, NewStore(Config{}), true)
	res := cs.InitializeResult()
	if res == nil || res.Capabilities == nil || res.Capabilities.Extensions[ExtensionID] == nil {
		t.Fatalf("server/discover capabilities = %+v, want extensions[%s]", res, ExtensionID)
	}
}

func TestTasksMethodsOverSDK(t *testing.T) {
	store := NewStore(Config{})
	defer closeStore(t, store)
	cs := serve(t, store, true)

	started := make(chan struct{})
	running, _ := store.Start("compiling", blockUntilCancelled(started))
	<-started
	got, err := call(cs, MethodGet, &UpdateParams{TaskID: &running.TaskID})
	if err != nil {
		t.Fatalf("tasks/get: %v", err)
	}
	if string(got["resultType"]) != `"complete"` || string(got["status"]) != `"working"` || string(got["statusMessage"]) != `"compiling"` {
		t.Errorf("tasks/get of a running task = %v", got)
	}
	for _, f := range []string{"result", "error", "inputRequests", "requestState", "ttl", "pollInterval"} {
		if _, ok := got[f]; ok {
			t.Errorf("tasks/get of a running task carries %q", f)
		}
	}

	ack, err := call(cs, MethodCancel, &UpdateParams{TaskID: &running.TaskID})
	if err != nil {
		t.Fatalf("tasks/cancel: %v", err)
	}
	for k := range ack {
		if k != "resultType" && k != "_meta" {
			t.Errorf("tasks/cancel ack carries %q: %v", k, ack)
		}
	}
	finish(t, store, running.TaskID)
	if _, err := call(cs, MethodCancel, &UpdateParams{TaskID: &running.TaskID}); err != nil {
		t.Errorf("tasks/cancel of a cancelled task: %v (want the same ack)", err)
	}
	got, _ = call(cs, MethodGet, &UpdateParams{TaskID: &running.TaskID})
	if string(got["status"]) != `"cancelled"` {
		t.Errorf("after cancel: %v", got)
	}

	done, _ := store.Start("", result(`{"content":[{"type":"text","text":"x"}],"isError":true}`))
	finish(t, store, done.TaskID)
	got, _ = call(cs, MethodGet, &UpdateParams{TaskID: &done.TaskID})
	if string(got["status"]) != `"completed"` || string(got["result"]) != `{"content":[{"type":"text","text":"x"}],"isError":true}` {
		t.Errorf("completed task = %v", got)
	}

	if _, err := call(cs, MethodUpdate, &UpdateParams{TaskID: &done.TaskID, InputResponses: map[string]json.RawMessage{}}); err != nil {
		t.Errorf("tasks/update of a finished task: %v", err)
	}

	for name, p := range map[string]*UpdateParams{
		"unknown id": {TaskID: ptr("nonexistent-12345")},
		"no id":      {},
		"empty id":   {TaskID: ptr("")},
	} {
		for _, m := range []string{MethodGet, MethodCancel} {
			if _, err := call(cs, m, p); code(err) != jsonrpc.CodeInvalidParams {
				t.Errorf("%s with %s: %v, want -32602", m, name, err)
			}
		}
	}
	if _, err := call(cs, MethodUpdate, &UpdateParams{TaskID: ptr("nonexistent"), InputResponses: map[string]json.RawMessage{}}); code(err) != jsonrpc.CodeInvalidParams {
		t.Errorf("tasks/update of an unknown id: %v", err)
	}
	for _, m := range []string{"tasks/result", "tasks/list"} {
		if _, err := call(cs, m, &UpdateParams{TaskID: &done.TaskID}); code(err) != jsonrpc.CodeMethodNotFound {
			t.Errorf("%s (removed by SEP-2663): %v, want -32601", m, err)
		}
	}
}

func TestTasksMethodsRefusedWithoutDeclaration(t *testing.T) {
	store := NewStore(Config{})
	defer closeStore(t, store)
	cs := serve(t, store, false)
	done, _ := store.Start("", result(`{}`))
	finish(t, store, done.TaskID)
	for _, m := range []string{MethodGet, MethodUpdate, MethodCancel} {
		_, err := call(cs, m, &UpdateParams{TaskID: &done.TaskID, InputResponses: map[string]json.RawMessage{}})
		var e *jsonrpc.Error
		if !errors.As(err, &e) || e.Code != CodeMissingCapability {
			t.Errorf("%s without the extension: %v, want -32021", m, err)
			continue
		}
		var data struct {
			RequiredCapabilities struct {
				Extensions map[string]json.RawMessage `json:"extensions"`
			} `json:"requiredCapabilities"`
		}
		if json.Unmarshal(e.Data, &data) != nil || string(data.RequiredCapabilities.Extensions[ExtensionID]) != `{}` {
			t.Errorf("%s: error data %s does not name the extension", m, e.Data)
		}
	}
}

func TestMcpNameHeaderMustBeTheTaskID(t *testing.T) {
	store := NewStore(Config{})
	defer closeStore(t, store)
	done, _ := store.Start("", result(`{}`))
	finish(t, store, done.TaskID)
	var header http.Header
	// Stands in for the HTTP handler, which hands every request its header.
	withHeader := func(next sdkmcp.MethodHandler) sdkmcp.MethodHandler {
		return func(ctx context.Context, method string, req sdkmcp.Request) (sdkmcp.Result, error) {
			if x := req.GetExtra(); x != nil {
				x.Header = header
			} else if r, ok := req.(*sdkmcp.ServerRequest[*GetParams]); ok {
				r.Extra = &sdkmcp.RequestExtra{Header: header}
			} else if r, ok := req.(*sdkmcp.ServerRequest[*UpdateParams]); ok {
				r.Extra = &sdkmcp.RequestExtra{Header: header}
			}
			return next(ctx, method, req)
		}
	}
	srvStore := store
	cs := serveOuter(t, srvStore, withHeader)
	for _, tc := range []struct {
		name string
		val  []string
		ok   bool
	}{
		{"matching", []string{done.TaskID}, true},
		{"matching with whitespace", []string{"  " + done.TaskID + " "}, true},
		{"another id", []string{"sep-2663-wrong-task-id"}, false},
		{"missing", nil, false},
	} {
		header = http.Header{}
		for _, v := range tc.val {
			header.Add("mcp-name", v)
		}
		_, err := call(cs, MethodGet, &UpdateParams{TaskID: &done.TaskID})
		if tc.ok && err != nil {
			t.Errorf("%s Mcp-Name: %v", tc.name, err)
		}
		if !tc.ok && code(err) != CodeHeaderMismatch {
			t.Errorf("%s Mcp-Name: %v, want -32020", tc.name, err)
		}
	}
}

// serveOuter is serve with middleware outside the extension's.
func serveOuter(t *testing.T, store *Store, outer sdkmcp.Middleware) *sdkmcp.ClientSession {
	t.Helper()
	srv := sdkmcp.NewServer(&sdkmcp.Implementation{Name: "t", Version: "1"}, nil)
	ext := &Extension{Store: store}
	if err := ext.Register(srv); err != nil {
		t.Fatal(err)
	}
	srv.AddReceivingMiddleware(outer, ext.Middleware)
	st, ct := sdkmcp.NewInMemoryTransports()
	ss, err := srv.Connect(context.Background(), st, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = ss.Close() })
	ccaps := &sdkmcp.ClientCapabilities{}
	ccaps.AddExtension(ExtensionID, nil)
	cl := sdkmcp.NewClient(&sdkmcp.Implementation{Name: "c", Version: "1"}, &sdkmcp.ClientOptions{Capabilities: ccaps})
	if err := sdkmcp.AddSendingCustomMethod[*UpdateParams, *rawResult](cl, MethodGet); err != nil {
		t.Fatal(err)
	}
	cs, err := cl.Connect(context.Background(), ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cs.Close() })
	return cs
}

func TestDeclared(t *testing.T) {
	caps := func(ext string) map[string]any {
		return map[string]any{"extensions": map[string]any{ext: map[string]any{}}}
	}
	for _, tc := range []struct {
		name string
		meta map[string]any
		want bool
	}{
		{"declared", map[string]any{sdkmcp.MetaKeyProtocolVersion: "2026-07-28", sdkmcp.MetaKeyClientCapabilities: caps(ExtensionID)}, true},
		{"other extension", map[string]any{sdkmcp.MetaKeyProtocolVersion: "2026-07-28", sdkmcp.MetaKeyClientCapabilities: caps("x/y")}, false},
		{"older version", map[string]any{sdkmcp.MetaKeyProtocolVersion: "2025-11-25", sdkmcp.MetaKeyClientCapabilities: caps(ExtensionID)}, false},
		{"no version", map[string]any{sdkmcp.MetaKeyClientCapabilities: caps(ExtensionID)}, false},
		{"settings not an object", map[string]any{sdkmcp.MetaKeyProtocolVersion: "2026-07-28", sdkmcp.MetaKeyClientCapabilities: map[string]any{"extensions": map[string]any{ExtensionID: true}}}, false},
		{"capabilities not an object", map[string]any{sdkmcp.MetaKeyProtocolVersion: "2026-07-28", sdkmcp.MetaKeyClientCapabilities: "all"}, false},
		{"nil", nil, false},
		{"EXTENSIONS", map[string]any{sdkmcp.MetaKeyProtocolVersion: "2026-07-28", sdkmcp.MetaKeyClientCapabilities: map[string]any{"EXTENSIONS": map[string]any{ExtensionID: map[string]any{}}}}, false},
		{"Extensions", map[string]any{sdkmcp.MetaKeyProtocolVersion: "2026-07-28", sdkmcp.MetaKeyClientCapabilities: map[string]any{"Extensions": map[string]any{ExtensionID: map[string]any{}}}}, false},
		{"extension id in capitals", map[string]any{sdkmcp.MetaKeyProtocolVersion: "2026-07-28", sdkmcp.MetaKeyClientCapabilities: caps(strings.ToUpper(ExtensionID))}, false},
		{"extensions null", map[string]any{sdkmcp.MetaKeyProtocolVersion: "2026-07-28", sdkmcp.MetaKeyClientCapabilities: map[string]any{"extensions": nil}}, false},
	} {
		if got := Declared(tc.meta); got != tc.want {
			t.Errorf("%s: Declared = %v, want %v", tc.name, got, tc.want)
		}
	}
}
