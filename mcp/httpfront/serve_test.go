package httpfront

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"
	sdkmcp "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/buildguard/buildguard/internal/testsupport/lockedbuf"
)

const testToken = "test-token-0123456789abcdef"

// serve starts Serve with lim on a loopback port and returns its address;
// the server stops when the test ends.
func serve(t *testing.T, lim Limits) string {
	t.Helper()
	sdk := sdkmcp.NewServer(&sdkmcp.Implementation{Name: "test", Version: "test"}, nil)
	h := New(Config{SDK: sdk, Calls: NewCalls(nil), Token: testToken, Limits: lim})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	served := make(chan error, 1)
	go func() { served <- Serve(ctx, ln, h) }()
	t.Cleanup(func() {
		cancel()
		if err := <-served; err != nil {
			t.Errorf("Serve: %v", err)
		}
	})
	return ln.Addr().String()
}

// dial opens a raw connection to addr.
func dial(t *testing.T, addr string) net.Conn {
	t.Helper()
	c, err := net.DialTimeout("tcp", addr, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// request is a raw HTTP/1.1 request for the endpoint: a ping with the token
// unless body or headers say otherwise.
func request(addr, extraHeaders, body string) string {
	return fmt.Sprintf("POST %s HTTP/1.1\r\nHost: %s\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\n%sContent-Length: %d\r\n\r\n%s",
		HTTPPath, addr, extraHeaders, len(body), body)
}

const ping = `{"jsonrpc":"2.0","id":1,"method":"ping"}`

var bearer = "Authorization: Bearer " + testToken + "\r\n"

// readResponse reads one response from c within 5 s.
func readResponse(t *testing.T, c net.Conn, br *bufio.Reader) (*http.Response, string) {
	t.Helper()
	_ = c.SetReadDeadline(time.Now().Add(5 * time.Second))
	resp, err := http.ReadResponse(br, nil)
	if err != nil {
		t.Fatalf("reading the response: %v", err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	return resp, string(b)
}

// closedWithin reports whether the server closes c within d (a read ends
// with EOF or a reset rather than our own deadline).
func closedWithin(c net.Conn, br *bufio.Reader, d time.Duration) bool {
	_ = c.SetReadDeadline(time.Now().Add(d))
	_, err := io.Copy(io.Discard, br)
	var ne net.Error
	return !(errors.As(err, &ne) && ne.Timeout())
}

// TestLimitsCloseStalledConnections: a client that sends no headers, a
// body it announced, or no next request, and a client without the token,
// holds its connection only as long as the limits say (docs/http.md#2).
func TestLimitsCloseStalledConnections(t *testing.T) {
	t.Parallel()
	lim := Limits{ReadHeaderTimeout: 300 * time.Millisecond, BodyTimeout: 300 * time.Millisecond, IdleTimeout: 300 * time.Millisecond}
	addr := serve(t, lim)

	t.Run("no headers", func(t *testing.T) {
		c := dial(t, addr)
		if !closedWithin(c, bufio.NewReader(c), 5*time.Second) {
			t.Error("a connection that sent nothing was still open after 5 s")
		}
	})
	t.Run("announced body never sent", func(t *testing.T) {
		c := dial(t, addr)
		br := bufio.NewReader(c)
		fmt.Fprintf(c, "POST %s HTTP/1.1\r\nHost: %s\r\n%sContent-Type: application/json\r\nContent-Length: 100\r\n\r\n", HTTPPath, addr, bearer)
		resp, body := readResponse(t, c, br)
		if resp.StatusCode != http.StatusRequestTimeout || body != `{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"Request Timeout: the body did not arrive in time"}}`+"\n" {
			t.Errorf("got %d %s", resp.StatusCode, body)
		}
		if !closedWithin(c, br, 5*time.Second) {
			t.Error("still open 5 s after the body timed out")
		}
	})
	t.Run("idle after an answer", func(t *testing.T) {
		c := dial(t, addr)
		br := bufio.NewReader(c)
		fmt.Fprint(c, request(addr, bearer, ping))
		if resp, body := readResponse(t, c, br); resp.StatusCode != http.StatusOK {
			t.Fatalf("ping: %d %s", resp.StatusCode, body)
		}
		if !closedWithin(c, br, 5*time.Second) {
			t.Error("an idle kept-alive connection was still open after 5 s")
		}
	})
	t.Run("after a 401", func(t *testing.T) {
		c := dial(t, addr)
		br := bufio.NewReader(c)
		fmt.Fprint(c, request(addr, "", ping))
		resp, _ := readResponse(t, c, br)
		if resp.StatusCode != http.StatusUnauthorized || !resp.Close {
			t.Errorf("got %d, close %v; want 401 closing the connection", resp.StatusCode, resp.Close)
		}
		if !closedWithin(c, br, 100*time.Millisecond) {
			t.Error("the connection stayed open after the 401")
		}
	})
}

// TestConnectionCap: connections beyond MaxConns are answered 503 with a
// JSON-RPC error and closed; once one closes, a new one is served.
func TestConnectionCap(t *testing.T) {
	t.Parallel()
	addr := serve(t, Limits{MaxConns: 2})
	held := []net.Conn{dial(t, addr), dial(t, addr)}
	for _, c := range held {
		// A request each, so both were accepted before the next dial.
		br := bufio.NewReader(c)
		fmt.Fprint(c, request(addr, bearer, ping))
		if resp, body := readResponse(t, c, br); resp.StatusCode != http.StatusOK {
			t.Fatalf("ping: %d %s", resp.StatusCode, body)
		}
	}
	c := dial(t, addr)
	br := bufio.NewReader(c)
	fmt.Fprint(c, request(addr, bearer, ping))
	resp, body := readResponse(t, c, br)
	want := `{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"Service Unavailable: too many connections; retry when a call has finished"}}` + "\n"
	if resp.StatusCode != http.StatusServiceUnavailable || body != want || resp.Header.Get("Content-Type") != "application/json" {
		t.Errorf("beyond the cap: %d %q %s", resp.StatusCode, resp.Header.Get("Content-Type"), body)
	}
	held[0].Close()
	deadline := time.Now().Add(10 * time.Second)
	for {
		c := dial(t, addr)
		br := bufio.NewReader(c)
		fmt.Fprint(c, request(addr, bearer, ping))
		resp, _ := readResponse(t, c, br)
		if resp.StatusCode == http.StatusOK {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no connection served within 10 s of one closing: %d", resp.StatusCode)
		}
		c.Close()
	}
}

// TestServerErrorsAreJSONRPC: what net/http answers by itself (a request
// it cannot parse, headers too large) carries a JSON-RPC error body too.
func TestServerErrorsAreJSONRPC(t *testing.T) {
	t.Parallel()
	addr := serve(t, Limits{})
	for name, raw := range map[string]string{
		"garbage":           "GARBAGE\r\n\r\n",
		"headers too large": fmt.Sprintf("POST %s HTTP/1.1\r\nHost: %s\r\nX-Big: %s\r\n\r\n", HTTPPath, addr, strings.Repeat("a", 2<<20)),
		"bad host":          "POST /mcp HTTP/1.1\r\nHost: a b\r\n\r\n",
	} {
		t.Run(name, func(t *testing.T) {
			c := dial(t, addr)
			br := bufio.NewReader(c)
			go fmt.Fprint(c, raw)
			resp, body := readResponse(t, c, br)
			if resp.StatusCode < 400 || resp.Header.Get("Content-Type") != "application/json" ||
				!strings.HasPrefix(body, `{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"`) || !strings.HasSuffix(body, "\"}}\n") {
				t.Errorf("got %d %q %q", resp.StatusCode, resp.Header.Get("Content-Type"), body)
			}
		})
	}
}

// TestStopClosesRequestsStillArriving: a stop closes at once the
// connections that have not sent a whole request (half a header, well
// inside ReadHeaderTimeout, or nothing yet), so they never hold it for the
// whole ShutdownTimeout, and an idle kept-alive one goes as net/http closes
// it.
func TestStopClosesRequestsStillArriving(t *testing.T) {
	t.Parallel()
	var logs lockedbuf.Buffer
	sdk := sdkmcp.NewServer(&sdkmcp.Implementation{Name: "test", Version: "test"}, nil)
	h := New(Config{SDK: sdk, Calls: NewCalls(nil), Token: testToken, Logger: hclog.New(&hclog.LoggerOptions{Output: &logs, Level: hclog.Debug})})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	served := make(chan error, 1)
	go func() { served <- Serve(ctx, ln, h) }()

	var halves []net.Conn
	for range 3 {
		c := dial(t, addr)
		fmt.Fprintf(c, "POST %s HTTP/1.1\r\nHost: %s\r\n", HTTPPath, addr)
		halves = append(halves, c)
	}
	silent := dial(t, addr) // sends nothing before the stop
	idle := dial(t, addr)
	ibr := bufio.NewReader(idle)
	fmt.Fprint(idle, request(addr, bearer, ping))
	if resp, body := readResponse(t, idle, ibr); resp.StatusCode != http.StatusOK {
		t.Fatalf("ping: %d %s", resp.StatusCode, body)
	}

	cancel()
	select {
	case err := <-served:
		if err != nil {
			t.Fatalf("Serve: %v", err)
		}
	case <-time.After(2 * ShutdownTimeout):
		t.Fatalf("Serve still running %v after the stop", 2*ShutdownTimeout)
	}
	if strings.Contains(logs.String(), "closing connections after the shutdown wait") {
		t.Errorf("the stop waited the whole ShutdownTimeout for connections that never sent a whole request:\n%s", logs.String())
	}
	for i, c := range halves {
		if !closedWithin(c, bufio.NewReader(c), 5*time.Second) {
			t.Errorf("half-header connection %d still open after the stop", i)
		}
	}
	fmt.Fprint(silent, request(addr, bearer, ping))
	if !closedWithin(silent, bufio.NewReader(silent), 5*time.Second) {
		t.Error("a connection that had sent nothing before the stop was still open")
	}
	if !closedWithin(idle, ibr, 5*time.Second) {
		t.Error("the idle kept-alive connection was still open after the stop")
	}
}

// TestRefusalsNeverWaitForTheBody: a request refused before its body is
// read (no token, a foreign Origin, another path, another method) whose
// body was announced and never comes is answered, and its connection
// closed at once: net/http would otherwise wait, without a deadline, for
// the body it reads before closing. MaxConns such sockets then hold no
// one with the token out (docs/http.md#2).
func TestRefusalsNeverWaitForTheBody(t *testing.T) {
	t.Parallel()
	const held = 8
	addr := serve(t, Limits{MaxConns: held})
	for name, tc := range map[string]struct {
		head   string
		status int
	}{
		"no token":       {fmt.Sprintf("POST %s HTTP/1.1\r\nHost: %s\r\n", HTTPPath, addr), http.StatusUnauthorized},
		"wrong token":    {fmt.Sprintf("POST %s HTTP/1.1\r\nHost: %s\r\nAuthorization: Bearer wrong-token-0123456789\r\n", HTTPPath, addr), http.StatusUnauthorized},
		"expect 100":     {fmt.Sprintf("POST %s HTTP/1.1\r\nHost: %s\r\nExpect: 100-continue\r\n", HTTPPath, addr), http.StatusUnauthorized},
		"foreign origin": {fmt.Sprintf("POST %s HTTP/1.1\r\nHost: %s\r\nOrigin: http://evil.example\r\n", HTTPPath, addr), http.StatusForbidden},
		"other path":     {fmt.Sprintf("POST /other HTTP/1.1\r\nHost: %s\r\n", addr), http.StatusNotFound},
		"other method":   {fmt.Sprintf("PUT %s HTTP/1.1\r\nHost: %s\r\n%s", HTTPPath, addr, bearer), http.StatusMethodNotAllowed},
	} {
		t.Run(name, func(t *testing.T) {
			// As many sockets as the cap: if any stayed open, the
			// request with the token below would be answered 503.
			for i := range held {
				c := dial(t, addr)
				br := bufio.NewReader(c)
				fmt.Fprintf(c, "%sContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n", tc.head)
				resp, _ := readResponse(t, c, br)
				if resp.StatusCode != tc.status || !resp.Close {
					t.Fatalf("socket %d: got %d, close %v; want %d closing the connection", i, resp.StatusCode, resp.Close, tc.status)
				}
				if !closedWithin(c, br, 2*time.Second) {
					t.Fatalf("socket %d: still open 2 s after the %d, waiting for the body it announced", i, tc.status)
				}
			}
			c := dial(t, addr)
			br := bufio.NewReader(c)
			fmt.Fprint(c, request(addr, bearer, ping))
			if resp, body := readResponse(t, c, br); resp.StatusCode != http.StatusOK {
				t.Errorf("with the token after %d refused sockets: %d %s", held, resp.StatusCode, body)
			}
		})
	}
}

// TestOversizedBodyRefusedBeforeContinue: a request with the token that
// announces a body over MaxHTTPBody and asks Expect: 100-continue is
// answered 413 and closed, never 100 Continue: the body is never asked for.
func TestOversizedBodyRefusedBeforeContinue(t *testing.T) {
	t.Parallel()
	addr := serve(t, Limits{})
	c := dial(t, addr)
	br := bufio.NewReader(c)
	fmt.Fprintf(c, "POST %s HTTP/1.1\r\nHost: %s\r\n%sContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nExpect: 100-continue\r\nContent-Length: %d\r\n\r\n",
		HTTPPath, addr, bearer, MaxHTTPBody+1)
	resp, body := readResponse(t, c, br)
	want := `{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"Request body exceeds 1048576 bytes"}}` + "\n"
	if resp.StatusCode != http.StatusRequestEntityTooLarge || body != want || !resp.Close {
		t.Errorf("got %d, close %v, %s; want 413 closing the connection", resp.StatusCode, resp.Close, body)
	}
	if !closedWithin(c, br, 5*time.Second) {
		t.Error("still open 5 s after the 413")
	}
}

// TestSparseLogKeepsPanics: the lines of net/http's error log are written
// at most once a period, but a panic that reached net/http is always
// written, at error level, whatever a stranger's noise logged just before.
func TestSparseLogKeepsPanics(t *testing.T) {
	var out strings.Builder
	l := &sparseLog{log: hclog.New(&hclog.LoggerOptions{Output: &out, Level: hclog.Debug}), every: time.Hour}
	fmt.Fprintln(l, "http: TLS handshake error from 127.0.0.1:1: EOF")
	fmt.Fprintln(l, "http: TLS handshake error from 127.0.0.1:2: EOF")
	fmt.Fprintln(l, "http: panic serving 127.0.0.1:3: boom")
	got := out.String()
	if strings.Count(got, "handshake error") != 1 {
		t.Errorf("the stranger's lines were not thinned:\n%s", got)
	}
	if !strings.Contains(got, "[ERROR] http: panic serving 127.0.0.1:3: boom") {
		t.Errorf("the panic line is missing or not at error level:\n%s", got)
	}
}
