package httpfront_test

import (
	"context"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/buildguard/buildguard/harness/mcptest"
	"github.com/buildguard/buildguard/internal/testsupport/lockedbuf"
	"github.com/buildguard/buildguard/internal/testsupport/wait"
	"github.com/buildguard/buildguard/mcp"
	"github.com/buildguard/buildguard/mcp/httpfront"
	"github.com/buildguard/buildguard/mcp/protocol"
	"github.com/buildguard/buildguard/service/tools"
)

// initializeSession sends initialize and returns the session id the front
// gave: 128 random bits, visible ASCII (docs/http.md#5).
func (f *httpFixture) initializeSession(t *testing.T) string {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, f.ts.URL+httpfront.HTTPPath, strings.NewReader(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25"}}`))
	req.Header.Set("Authorization", "Bearer "+testToken)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	resp, err := f.client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	id := resp.Header.Get("Mcp-Session-Id")
	if resp.StatusCode != http.StatusOK || len(id) != 22 || strings.Trim(id, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_") != "" {
		t.Fatalf("initialize: %d with session id %q", resp.StatusCode, id)
	}
	return id
}

// TestHTTPCancellation: a notifications/cancelled POST in the session a
// verification batch was called in cancels its context, and the batch is
// never answered (204); a client closing its request cancels the call too.
func TestHTTPCancellation(t *testing.T) {
	t.Parallel()
	caller := &mcptest.FakeCaller{Started: make(chan string, 4)}
	f := newHTTPFixture(t, caller)
	session := f.initializeSession(t)
	batch := `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"reclazz_verify_batch","arguments":{"classes":[]}}}`
	hdr := []string{"MCP-Protocol-Version", protocol.Version20251125, "Mcp-Session-Id", session}
	type answer struct {
		status int
		body   string
	}
	done := make(chan answer, 1)
	go func() {
		s, b := f.post(context.Background(), batch, hdr...)
		done <- answer{s, b}
	}()
	caller.AwaitStart(t)
	if s, b := f.post(context.Background(), `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":7,"reason":"test"}}`, hdr...); s != http.StatusAccepted || b != "" {
		t.Errorf("cancellation: %d %q", s, b)
	}
	select {
	case a := <-done:
		if a.status != http.StatusNoContent || a.body != "" {
			t.Errorf("cancelled batch answered: %d %s", a.status, a.body)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("cancelled batch still running after 10 s")
	}
	if n := caller.CancelledCount(); n != 1 {
		t.Errorf("batches cancelled: %d, want 1", n)
	}

	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		s, b := f.post(ctx, batch, hdr...)
		done <- answer{s, b}
	}()
	caller.AwaitStart(t)
	cancel()
	<-done
	wait.For(t, 10*time.Second, "the closed request's call is cancelled", func() bool { return caller.CancelledCount() == 2 })
}

// TestHTTPCancelReachesOnlyItsOwnRequest: a notifications/cancelled from
// another session, or from no session (a 2026-07-28 client cancels by
// closing its request), never cancels a call in flight, even one with the
// id it names (docs/http.md#5).
func TestHTTPCancelReachesOnlyItsOwnRequest(t *testing.T) {
	t.Parallel()
	release := make(chan tools.Result, 1)
	caller := &mcptest.FakeCaller{Started: make(chan string, 1), Release: release}
	f := newHTTPFixture(t, caller)
	mine, other := f.initializeSession(t), f.initializeSession(t)
	if mine == other {
		t.Fatal("two initializes got the same session id")
	}
	done := make(chan int, 1)
	go func() {
		s, _ := f.post(context.Background(), `{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"reclazz_verify_batch","arguments":{}}}`,
			"MCP-Protocol-Version", protocol.Version20251125, "Mcp-Session-Id", mine)
		done <- s
	}()
	caller.AwaitStart(t)
	cancel := `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":5}}`
	for _, hdr := range [][]string{
		{"MCP-Protocol-Version", protocol.Version20251125, "Mcp-Session-Id", other},
		{"MCP-Protocol-Version", protocol.Version20251125},
		{"MCP-Protocol-Version", protocol.Version20260728},
	} {
		if s, b := f.post(context.Background(), cancel, hdr...); s != http.StatusAccepted || b != "" {
			t.Errorf("cancellation %v: %d %q", hdr, s, b)
		}
	}
	release <- tools.Result{Data: []byte(`{"results":[]}`), LegacyText: "done"}
	select {
	case s := <-done:
		if s != http.StatusOK {
			t.Errorf("the call ended with %d, want its answer (200)", s)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the call did not finish within 10 s of its release")
	}
	if n := caller.CancelledCount(); n != 0 {
		t.Errorf("calls cancelled by foreign notifications: %d", n)
	}
}

// TestHTTPClientAbortsAreNotLogged: a client closing its request is the
// normal way to cancel over HTTP; at the default level nothing is logged
// for it, however the abort meets the answer.
func TestHTTPClientAbortsAreNotLogged(t *testing.T) {
	t.Parallel()
	caller := &mcptest.FakeCaller{Started: make(chan string, 1)}
	f := newHTTPFixture(t, caller)
	for i := range 40 {
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan struct{})
		go func() {
			defer close(done)
			f.post(ctx, `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"reclazz_verify_batch","arguments":{}}}`,
				"MCP-Protocol-Version", protocol.Version20251125)
		}()
		caller.AwaitStart(t)
		cancel()
		<-done
		wait.For(t, 10*time.Second, "the aborted call is cancelled", func() bool { return caller.CancelledCount() == i+1 })
	}
	ping := `{"jsonrpc":"2.0","id":2,"method":"ping"}`
	if s, b := f.post(context.Background(), ping); s != http.StatusOK {
		t.Fatalf("ping after the aborts: %d %s", s, b)
	}
	if logs := f.logs.String(); logs != "" {
		t.Errorf("aborted calls logged at the default level:\n%s", logs)
	}
}

// TestHTTPShutdown: cancelling ServeStreamableHTTP's context cancels the
// call in flight and returns well within 5 s.
func TestHTTPShutdown(t *testing.T) {
	checkNoLeakedGoroutines(t)
	caller := &mcptest.FakeCaller{Started: make(chan string, 1)}
	srv := mcp.NewServer(mcp.Config{Caller: caller, Version: "test", Logger: mcptest.TestLogger(&lockedbuf.Buffer{})})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	served := make(chan error, 1)
	go func() { served <- srv.ServeStreamableHTTP(ctx, ln, testToken) }()
	tr := &http.Transport{DisableKeepAlives: true}
	defer tr.CloseIdleConnections()
	answered := make(chan int, 1)
	go func() {
		req, _ := http.NewRequest(http.MethodPost, "http://"+ln.Addr().String()+httpfront.HTTPPath+"?token="+testToken,
			strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"reclazz_verify_batch","arguments":{}}}`))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		resp, err := (&http.Client{Transport: tr, Timeout: 10 * time.Second}).Do(req)
		if err != nil {
			answered <- 0
			return
		}
		resp.Body.Close()
		answered <- resp.StatusCode
	}()
	caller.AwaitStart(t)
	start := time.Now()
	cancel()
	select {
	case err := <-served:
		if err != nil {
			t.Errorf("ServeStreamableHTTP: %v", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("still serving 5 s after the stop")
	}
	if d := time.Since(start); d > httpfront.ShutdownTimeout {
		t.Errorf("stop took %s", d)
	}
	if s := <-answered; s != http.StatusOK {
		t.Errorf("the cancelled call's request ended with %d, want its 200 answer", s)
	}
	if caller.CancelledCount() != 1 {
		t.Error("the call in flight was not cancelled")
	}
}
