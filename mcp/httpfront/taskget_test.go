package httpfront

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	sdkmcp "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/buildguard/buildguard/internal/testsupport/wait"
	"github.com/buildguard/buildguard/mcp/protocol"
	"github.com/buildguard/buildguard/service/mcptask"
)

// taskFronts are two fronts of one SDK server serving one task store: one
// that answers tasks/get itself, one that leaves every request to the SDK.
type taskFronts struct {
	store          *mcptask.Store
	direct, viaSDK *Handler
}

func newTaskFronts(t *testing.T) *taskFronts {
	t.Helper()
	caps := &sdkmcp.ServerCapabilities{}
	mcptask.Advertise(caps)
	info := &sdkmcp.Implementation{Name: "test", Version: "1.2.3 <&>"}
	sdk := sdkmcp.NewServer(info, &sdkmcp.ServerOptions{Capabilities: caps})
	// A stopped clock: a running task's ttlMs grows with time.
	at := time.Date(2026, 12, 2, 9, 0, 0, 0, time.UTC)
	store := mcptask.NewStore(mcptask.Config{Now: func() time.Time { return at }})
	ext := &mcptask.Extension{Store: store}
	if err := ext.Register(sdk); err != nil {
		t.Fatal(err)
	}
	calls := NewCalls(nil)
	sdk.AddReceivingMiddleware(calls.Middleware, ext.Middleware)
	cfg := Config{SDK: sdk, Calls: calls, Token: testToken, Versions: sdkmcp.SupportedProtocolVersions()}
	f := &taskFronts{store: store, viaSDK: New(cfg)}
	cfg.Tasks, cfg.ServerInfo = store, info
	f.direct = New(cfg)
	t.Cleanup(func() {
		f.direct.Close()
		f.viaSDK.Close()
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := store.Close(ctx); err != nil {
			t.Errorf("closing the store: %v", err)
		}
	})
	return f
}

// taskGet is a 2026-07-28 tasks/get as the SEP's client sends it; edit
// changes its headers, and meta its _meta, before it is sent.
type taskGet struct {
	id     string
	idLit  string // the JSON literal of the taskId ("" = id as a string)
	meta   map[string]any
	header http.Header
	// rawMeta is written into _meta as it is: encoding/json would
	// escape what it holds.
	rawMeta string
}

func newTaskGet(id string) *taskGet {
	h := http.Header{}
	h.Set("Authorization", "Bearer "+testToken)
	h.Set("Content-Type", "application/json")
	h.Set("Accept", "application/json, text/event-stream")
	h.Set(versionHeader, protocol.Version20260728)
	h.Set("Mcp-Method", mcptask.MethodGet)
	h.Set("Mcp-Name", id)
	return &taskGet{id: id, header: h, meta: map[string]any{
		sdkmcp.MetaKeyProtocolVersion:    protocol.Version20260728,
		sdkmcp.MetaKeyClientCapabilities: map[string]any{"extensions": map[string]any{mcptask.ExtensionID: map[string]any{}}},
	}}
}

func (g *taskGet) body() string {
	idLit := g.idLit
	if idLit == "" {
		b, _ := json.Marshal(g.id)
		idLit = string(b)
	}
	meta, _ := json.Marshal(g.meta)
	if g.rawMeta != "" {
		meta = append(meta[:len(meta)-1], ","+g.rawMeta+"}"...)
	}
	return fmt.Sprintf(`{"jsonrpc":"2.0","id":7,"method":"tasks/get","params":{"taskId":%s,"_meta":%s}}`, idLit, meta)
}

func (g *taskGet) request() *http.Request {
	r := httptest.NewRequest(http.MethodPost, HTTPPath, strings.NewReader(g.body()))
	r.Header = g.header.Clone()
	// As net/http serves a request that came to 127.0.0.1:8080.
	r.Host = "127.0.0.1:8080"
	local := &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 8080}
	return r.WithContext(context.WithValue(r.Context(), http.LocalAddrContextKey, local))
}

// answer is what a front answered: status, content type and body.
type answer struct {
	Status      int
	ContentType string
	Body        string
}

func serveOne(h *Handler, r *http.Request) answer {
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	return answer{w.Code, w.Header().Get("Content-Type"), w.Body.String()}
}

// TestDirectTaskGetAnswersAsTheSDK: the front's own answer to tasks/get is
// the SDK's, byte for byte, for a working task whose status message needs
// escaping and for a completed one; every request the SDK would refuse or
// answer otherwise is left to it (docs/http.md#4.1).
func TestDirectTaskGetAnswersAsTheSDK(t *testing.T) {
	f := newTaskFronts(t)
	release := make(chan struct{})
	task, err := f.store.Start("queued", func(ctx context.Context, r *mcptask.Run) (json.RawMessage, error) {
		r.Report(`> Task :compileJava <&> "ünïcode" \ 	tab`)
		select {
		case <-release:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
		return json.RawMessage(`{"content":[{"type":"text","text":"<ok> & done"}],"isError":false}`), nil
	})
	if err != nil {
		t.Fatal(err)
	}
	ask := func(g *taskGet) (direct, viaSDK answer, took bool) {
		t.Helper()
		m, rerr := protocol.Parse([]byte(g.body()))
		if rerr != nil {
			t.Fatalf("parse: %v", rerr)
		}
		// Params the checks refuse (a taskId that is no string) never
		// reach directTaskGet: both fronts give the same refusal.
		if params, _, _, rerr := m.Forward(); rerr == nil {
			_, took = f.direct.directTaskGet(g.request(), m, params)
		}
		return serveOne(f.direct, g.request()), serveOne(f.viaSDK, g.request()), took
	}
	wait.For(t, 10*time.Second, "the task's progress line", func() bool {
		d, err := f.store.Get(task.TaskID)
		return err == nil && strings.HasPrefix(d.StatusMessage, ">")
	})

	checkSame := func(name string, g *taskGet, wantDirect bool) {
		t.Helper()
		direct, viaSDK, took := ask(g)
		if took != wantDirect {
			t.Errorf("%s: answered by the front itself = %v, want %v", name, took, wantDirect)
		}
		if diff := cmp.Diff(viaSDK, direct); diff != "" {
			t.Errorf("%s: the front's answer differs from the SDK's (-sdk +front):\n%s", name, diff)
		}
	}
	checkSame("working", newTaskGet(task.TaskID), true)
	if working, _, _ := ask(newTaskGet(task.TaskID)); working.Status != http.StatusOK || !strings.Contains(working.Body, `"status":"working","statusMessage":"> Task :compileJava <&>`) {
		t.Fatalf("working task answered %+v", working)
	}

	declined := map[string]func(g *taskGet){
		"Accept through a wildcard":       func(g *taskGet) { g.header.Set("Accept", "*/*") },
		"Accept without the stream":       func(g *taskGet) { g.header.Set("Accept", "application/json") },
		"Content-Type not JSON":           func(g *taskGet) { g.header.Set("Content-Type", "text/plain") },
		"no Mcp-Method":                   func(g *taskGet) { g.header.Del("Mcp-Method") },
		"a Last-Event-ID":                 func(g *taskGet) { g.header.Set("Last-Event-ID", "x") },
		"another Mcp-Method":              func(g *taskGet) { g.header.Set("Mcp-Method", mcptask.MethodCancel) },
		"header version not _meta's":      func(g *taskGet) { g.header.Set(versionHeader, "2025-11-25") },
		"capabilities not an object":      func(g *taskGet) { g.meta[sdkmcp.MetaKeyClientCapabilities] = []any{} },
		"capabilities of the wrong shape": func(g *taskGet) { g.meta[sdkmcp.MetaKeyClientCapabilities] = map[string]any{"roots": 5} },
		"client info of the wrong shape":  func(g *taskGet) { g.meta[sdkmcp.MetaKeyClientInfo] = "me" },
		"extension not declared": func(g *taskGet) {
			g.meta[sdkmcp.MetaKeyClientCapabilities] = map[string]any{}
		},
		"taskId a number": func(g *taskGet) { g.idLit = "12" },
		"unknown taskId": func(g *taskGet) {
			g.id = "no-such-task"
			g.header.Set("Mcp-Name", g.id)
		},
	}
	for name, edit := range declined {
		g := newTaskGet(task.TaskID)
		edit(g)
		checkSame(name, g, false)
	}
	// Encoded again for the SDK, '<' grows to six bytes and U+2028 to
	// two: a body the front accepts reaches the SDK whole even when its
	// canonical form is over MaxHTTPBody (1.2 MiB here).
	for name, pad := range map[string]string{"<": strings.Repeat("<", 200<<10), "U+2028": strings.Repeat("\u2028", 200<<10)} {
		g := newTaskGet(task.TaskID)
		g.rawMeta = `"pad":"` + pad + `"`
		direct, viaSDK, took := ask(g)
		if !took || viaSDK.Status != http.StatusOK || direct != viaSDK {
			t.Errorf("a body padded with %s: answered by the front itself %v, go-sdk answered %d %.200s", name, took, viaSDK.Status, viaSDK.Body)
		}
	}
	withInfo := newTaskGet(task.TaskID)
	withInfo.meta[sdkmcp.MetaKeyClientInfo] = map[string]any{"name": "host", "version": "1"}
	withInfo.header.Add("Accept", "text/html")
	checkSame("with client info and another Accept line", withInfo, true)

	close(release)
	if err := f.store.Wait(context.Background(), task.TaskID); err != nil {
		t.Fatal(err)
	}
	checkSame("completed", newTaskGet(task.TaskID), true)
	direct, _, _ := ask(newTaskGet(task.TaskID))
	if !strings.Contains(direct.Body, `"status":"completed"`) || !strings.Contains(direct.Body, `<ok> & done`) {
		t.Errorf("completed task answered %s", direct.Body)
	}
}

// TestDirectTaskGetManyPollers: sixteen clients polling one task while it
// completes each get a whole answer every time, and none reads working
// again once it read completed.
func TestDirectTaskGetManyPollers(t *testing.T) {
	f := newTaskFronts(t)
	release := make(chan struct{})
	task, err := f.store.Start("starting", func(ctx context.Context, r *mcptask.Run) (json.RawMessage, error) {
		for i := 0; ; i++ {
			select {
			case <-release:
				return json.RawMessage(`{"content":[],"isError":false}`), nil
			case <-ctx.Done():
				return nil, ctx.Err()
			case <-time.After(time.Millisecond):
				r.Report(fmt.Sprintf("line %d", i))
			}
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	const pollers, polls = 16, 60
	errs := make(chan error, pollers)
	for range pollers {
		go func() {
			completed := false
			for range polls {
				a := serveOne(f.direct, newTaskGet(task.TaskID).request())
				var m struct {
					Result struct {
						Status string `json:"status"`
					} `json:"result"`
				}
				if a.Status != http.StatusOK || json.Unmarshal([]byte(a.Body), &m) != nil {
					errs <- fmt.Errorf("answer %+v", a)
					return
				}
				switch st := m.Result.Status; {
				case st == "completed":
					completed = true
				case st == "working" && !completed:
				default:
					errs <- fmt.Errorf("status %q after completed=%v", st, completed)
					return
				}
			}
			errs <- nil
		}()
	}
	time.Sleep(20 * time.Millisecond)
	close(release)
	for range pollers {
		select {
		case err := <-errs:
			if err != nil {
				t.Error(err)
			}
		case <-time.After(30 * time.Second):
			t.Fatal("a poller did not finish within 30 s")
		}
	}
}
