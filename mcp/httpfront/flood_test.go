package httpfront

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"
	sdkmcp "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/buildguard/buildguard/internal/testsupport/lockedbuf"
)

// strangerKinds are the floods of a process without the token: half a
// header, nothing at all, a request without the token announcing a body it
// never sends, and a request on another path.
var strangerKinds = []func(addr string) string{
	func(addr string) string { return fmt.Sprintf("POST %s HTTP/1.1\r\nHost: %s\r\n", HTTPPath, addr) },
	func(string) string { return "" },
	func(addr string) string {
		return fmt.Sprintf("POST %s HTTP/1.1\r\nHost: %s\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n", HTTPPath, addr)
	},
	func(addr string) string {
		return fmt.Sprintf("POST /x HTTP/1.1\r\nHost: %s\r\nContent-Length: 1000\r\n\r\n", addr)
	},
}

// flood runs n strangers against addr until ctx is done: each connects,
// sends what its kind sends, waits until the server closes the connection
// (at most 20 s) and connects again at once. It returns the connections
// made, how many of them the server closed, and a wait for the strangers
// to end once ctx is done.
func flood(ctx context.Context, addr string, n int) (dials, closed *atomic.Int64, wait func()) {
	dials, closed = new(atomic.Int64), new(atomic.Int64)
	var wg sync.WaitGroup
	for i := range n {
		send := strangerKinds[i%len(strangerKinds)](addr)
		wg.Go(func() {
			buf := make([]byte, 512)
			for ctx.Err() == nil {
				c, err := net.DialTimeout("tcp", addr, 2*time.Second)
				if err != nil {
					continue
				}
				dials.Add(1)
				unblock := context.AfterFunc(ctx, func() { c.Close() })
				_, _ = io.WriteString(c, send)
				_ = c.SetReadDeadline(time.Now().Add(20 * time.Second))
				for {
					if _, err := c.Read(buf); err != nil {
						if ne, ok := err.(net.Error); ctx.Err() == nil && (!ok || !ne.Timeout()) {
							closed.Add(1)
						}
						break
					}
				}
				unblock()
				c.Close()
			}
		})
	}
	return dials, closed, wg.Wait
}

// openFiles is the number of descriptors this process holds, -1 where
// /proc/self/fd does not say.
func openFiles() int {
	entries, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		return -1
	}
	return len(entries)
}

// TestStrangersNeverHoldOutTheToken: however many connections without the
// token arrive, and however fast they come back (half a header, nothing,
// a body announced and never sent, another path; each reconnecting the
// moment it is closed), a client with the token is served, each request on
// a new connection, within a few seconds (docs/decisions.md#D23). The
// server holds a bounded number of descriptors meanwhile, and its debug
// log gets a bounded number of lines, not one per connection.
func TestStrangersNeverHoldOutTheToken(t *testing.T) {
	t.Parallel()
	var logs lockedbuf.Buffer
	sdk := sdkmcp.NewServer(&sdkmcp.Implementation{Name: "test", Version: "test"}, nil)
	h := New(Config{SDK: sdk, Calls: NewCalls(nil), Token: testToken,
		Logger: hclog.New(&hclog.LoggerOptions{Output: &logs, Level: hclog.Debug})})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ctx, cancel := context.WithCancel(context.Background())
	served := make(chan error, 1)
	go func() { served <- Serve(ctx, ln, h) }()
	t.Cleanup(func() {
		cancel()
		if err := <-served; err != nil {
			t.Errorf("Serve: %v", err)
		}
	})

	before := openFiles()
	const strangers = 160 // beyond MaxConns and the 503s in progress together
	floodCtx, stop := context.WithCancel(context.Background())
	dials, closed, wait := flood(floodCtx, addr, strangers)
	stopFlood := sync.OnceFunc(func() {
		stop()
		wait()
	})
	t.Cleanup(stopFlood)

	// The flood is on once every stranger has connected at least once.
	deadline := time.Now().Add(30 * time.Second)
	for dials.Load() < 2*strangers {
		if time.Now().After(deadline) {
			t.Fatalf("only %d connections of the strangers in 30 s", dials.Load())
		}
		runtime.Gosched()
	}

	const bound = 5 * time.Second // about 2 s promised; generous under -race
	maxFiles, slowest := 0, time.Duration(0)
	for i := range 15 {
		start := time.Now()
		status, body, err := postWithToken(addr, bound)
		took := time.Since(start)
		if err != nil || status != http.StatusOK || took > bound {
			t.Errorf("request %d with the token during the flood: %d %s %v after %v", i, status, body, err, took.Round(time.Millisecond))
		}
		slowest = max(slowest, took)
		maxFiles = max(maxFiles, openFiles())
	}
	stopFlood()
	if dials.Load() < 3*strangers || closed.Load() < strangers {
		t.Errorf("the flood made %d connections, %d closed by the server: no flood", dials.Load(), closed.Load())
	}
	// Each stranger holds one socket of its own; the server at most
	// MaxConns, the 503s in progress and a few on their way out.
	if limit := before + strangers + DefaultLimits.MaxConns + maxRejecting + 64; before >= 0 && maxFiles > limit {
		t.Errorf("the process held %d descriptors during the flood, over %d (%d before it)", maxFiles, limit, before)
	}
	if n := strings.Count(logs.String(), "\n"); n > 10 {
		t.Errorf("the flood wrote %d log lines, want at most 10:\n%.2000s", n, logs.String())
	}
	t.Logf("%d connections of strangers, %d closed by the server; the slowest request with the token took %v; at most %d descriptors (%d before)",
		dials.Load(), closed.Load(), slowest.Round(time.Millisecond), maxFiles, before)
}

// postWithToken sends a ping with the token on a new connection and reads
// its answer, all within d.
func postWithToken(addr string, d time.Duration) (int, string, error) {
	c, err := net.DialTimeout("tcp", addr, d)
	if err != nil {
		return 0, "", err
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(d))
	if _, err := io.WriteString(c, request(addr, bearer, ping)); err != nil {
		return 0, "", err
	}
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		return 0, "", err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b), err
}
