package mcp_test

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/buildguard/buildguard/harness/fakeagent"
	"github.com/buildguard/buildguard/mcp"
	"github.com/buildguard/buildguard/mcp/httpfront"
	"github.com/buildguard/buildguard/service/tools"
)

const benchSHA = "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08"

// httpBench is one server serving both stdio (pipes) and HTTP (a loopback
// listener) to the same fake agent.
type httpBench struct {
	agentPort int
	stdio     func(line string) string
	url       string
	client    *http.Client
}

func newHTTPBench(b *testing.B) *httpBench {
	a := fakeagent.NewServer(b, fakeagent.WithHeartbeat(-1))
	a.SetReceipt("com.acme.A", fakeagent.Receipt{SHA256: benchSHA, Source: "/p/A.class", Status: "applied", Detail: "Reloaded", CompletedAt: "2026-09-08T09:12:44.371Z"})
	srv := mcp.NewServer(mcp.Config{Caller: tools.NewService(tools.Deps{})})

	stdio := stdioSession(b, srv)
	stdio(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25"}}`)

	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	served := make(chan error, 1)
	go func() { served <- srv.ServeStreamableHTTP(ctx, ln, "bench-token-0123456789") }()
	tr := &http.Transport{MaxIdleConnsPerHost: 32}
	b.Cleanup(func() { cancel(); <-served; tr.CloseIdleConnections() })
	return &httpBench{agentPort: a.Port(), stdio: stdio, url: "http://" + ln.Addr().String() + httpfront.HTTPPath, client: &http.Client{Transport: tr, Timeout: 20 * time.Second}}
}

func (h *httpBench) verify(id int) string {
	return fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"reclazz_verify","arguments":{"port":"%d","className":"com.acme.A","sha256":"%s"}}}`, id, h.agentPort, benchSHA)
}

// post sends one request over HTTP as a 2025-11-25 client does.
func (h *httpBench) post(b *testing.B, body string) string {
	req, err := http.NewRequest(http.MethodPost, h.url, strings.NewReader(body))
	if err != nil {
		b.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer bench-token-0123456789")
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("MCP-Protocol-Version", "2025-11-25")
	resp, err := h.client.Do(req)
	if err != nil {
		b.Fatal(err)
	}
	defer resp.Body.Close()
	out, err := io.ReadAll(resp.Body)
	if err != nil || resp.StatusCode != http.StatusOK {
		b.Fatalf("HTTP %d: %s (%v)", resp.StatusCode, out, err)
	}
	return string(out)
}

// BenchmarkHTTPCall measures one reclazz_verify tools/call over streamable
// HTTP (keep-alive connection, token, Origin/Host and body checks, a
// session per request) next to the same call over stdio to the same server
// and agent, alternating within each iteration; it reports both medians and
// their ratio.
func BenchmarkHTTPCall(b *testing.B) {
	h := newHTTPBench(b)
	var viaHTTP, viaStdio []float64
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		start := time.Now()
		if resp := h.post(b, h.verify(i+1)); !strings.Contains(resp, `\"status\":\"applied\"`) {
			b.Fatalf("HTTP verify answered %s", resp)
		}
		viaHTTP = append(viaHTTP, float64(time.Since(start).Nanoseconds())/1000)
		start = time.Now()
		if resp := h.stdio(h.verify(i + 1)); !strings.Contains(resp, `\"status\":\"applied\"`) {
			b.Fatalf("stdio verify answered %s", resp)
		}
		viaStdio = append(viaStdio, float64(time.Since(start).Nanoseconds())/1000)
	}
	m, s := median(viaHTTP), median(viaStdio)
	b.ReportMetric(m, "http-us")
	b.ReportMetric(s, "stdio-us")
	b.ReportMetric(m/s, "ratio")
}

// BenchmarkHTTPConcurrent runs b.N tools/list requests from 16 concurrent
// HTTP clients (keep-alive connections) and reports the requests per second
// the HTTP front, go-sdk and the middleware sustain. tools/list touches no
// agent: an agent serves its socket connections one by one, which would
// measure the agent instead.
func BenchmarkHTTPConcurrent(b *testing.B) {
	const clients = 16
	h := newHTTPBench(b)
	next := make(chan int, b.N)
	for i := 0; i < b.N; i++ {
		next <- i + 1
	}
	close(next)
	var wg sync.WaitGroup
	b.ResetTimer()
	start := time.Now()
	for c := 0; c < clients; c++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for id := range next {
				if resp := h.post(b, fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/list"}`, id)); !strings.Contains(resp, `"name":"reclazz_verify_batch"`) {
					b.Errorf("tools/list answered %s", resp)
					return
				}
			}
		}()
	}
	wg.Wait()
	b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "req/s")
	b.ReportMetric(clients, "clients")
}
