package httpfront

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"

	"github.com/buildguard/buildguard/mcp/protocol"
)

// Limits bound what one client, with or without the token, can hold of
// the server (docs/http.md#2): a connection that stalls or idles is
// closed, and connections beyond MaxConns are answered 503 and closed at
// once. Each zero field means its default in DefaultLimits.
type Limits struct {
	// ReadHeaderTimeout bounds the wait for a request's headers.
	ReadHeaderTimeout time.Duration
	// BodyTimeout bounds the wait for a request's body, once its headers
	// arrived; the call itself then runs as long as it needs.
	BodyTimeout time.Duration
	// IdleTimeout closes a kept-alive connection that sends no next
	// request.
	IdleTimeout time.Duration
	// MaxConns caps the connections open at once.
	MaxConns int
}

// DefaultLimits are the limits of `buildguard mcp --http`.
var DefaultLimits = Limits{
	ReadHeaderTimeout: 10 * time.Second,
	BodyTimeout:       30 * time.Second,
	IdleTimeout:       60 * time.Second,
	MaxConns:          64,
}

func (l Limits) withDefaults() Limits {
	if l.ReadHeaderTimeout <= 0 {
		l.ReadHeaderTimeout = DefaultLimits.ReadHeaderTimeout
	}
	if l.BodyTimeout <= 0 {
		l.BodyTimeout = DefaultLimits.BodyTimeout
	}
	if l.IdleTimeout <= 0 {
		l.IdleTimeout = DefaultLimits.IdleTimeout
	}
	if l.MaxConns <= 0 {
		l.MaxConns = DefaultLimits.MaxConns
	}
	return l
}

// The error texts of the connection layer.
const (
	msgTooManyConns = "Service Unavailable: too many connections; retry when a call has finished"
)

// rejectWait bounds how long a connection beyond the cap is kept to read
// the start of its request, so it sees the 503 rather than a reset.
const rejectWait = time.Second

// maxRejecting bounds the connections being answered 503 at once; beyond
// it they are closed without an answer.
const maxRejecting = 64

// Serve serves h on ln until ctx is done; then it cancels the calls in
// flight, stops accepting and waits at most ShutdownTimeout for their
// answers before closing every connection. It returns nil after such a
// stop. h's Limits apply.
func Serve(ctx context.Context, ln net.Listener, h *Handler) error {
	lim := h.limits
	fresh := &newConns{conns: map[net.Conn]struct{}{}}
	hs := &http.Server{
		Handler:           h,
		ReadHeaderTimeout: lim.ReadHeaderTimeout,
		IdleTimeout:       lim.IdleTimeout,
		ErrorLog:          h.log.StandardLogger(&hclog.StandardLoggerOptions{ForceLevel: hclog.Debug}),
		ConnState:         fresh.track,
	}
	cl := &capListener{Listener: ln, slots: make(chan struct{}, lim.MaxConns), rejecting: make(chan struct{}, maxRejecting), log: h.log}
	served := make(chan error, 1)
	go func() { served <- hs.Serve(cl) }()
	select {
	case err := <-served:
		h.Close()
		return fmt.Errorf("serving MCP over HTTP: %w", err)
	case <-ctx.Done():
	}
	h.Close()
	fresh.stop()
	stopCtx, cancel := context.WithTimeout(context.Background(), ShutdownTimeout)
	defer cancel()
	if err := hs.Shutdown(stopCtx); err != nil {
		h.log.Warn("closing connections after the shutdown wait", "waited", ShutdownTimeout)
		_ = hs.Close()
	}
	if err := <-served; err != nil && !errors.Is(err, http.ErrServerClosed) {
		return fmt.Errorf("serving MCP over HTTP: %w", err)
	}
	return nil
}

// newConns knows the connections that have not yet read a whole request
// (net/http's StateNew: headers still arriving, or nothing sent yet).
// Shutdown waits for such a connection up to its ReadHeaderTimeout (it
// counts one as idle only after 5 s), so a peer sending half a header could
// hold a stop for the whole ShutdownTimeout; stop closes them at once, and
// every connection accepted after it (docs/http.md#2). A connection whose
// request was read is left to Shutdown: its call gets its answer, and an
// idle kept-alive one Shutdown closes itself.
type newConns struct {
	mu       sync.Mutex
	conns    map[net.Conn]struct{}
	stopping bool
}

// track is the server's ConnState hook.
func (n *newConns) track(c net.Conn, state http.ConnState) {
	n.mu.Lock()
	defer n.mu.Unlock()
	if state != http.StateNew {
		delete(n.conns, c)
		return
	}
	if n.stopping {
		_ = c.Close()
		return
	}
	n.conns[c] = struct{}{}
}

// stop closes every connection that has not read a whole request, and from
// now on every new one.
func (n *newConns) stop() {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.stopping = true
	for c := range n.conns {
		_ = c.Close()
	}
	clear(n.conns)
}

// capListener hands out at most cap(slots) connections at once; one
// beyond that is answered 503 and closed.
type capListener struct {
	net.Listener
	slots     chan struct{}
	rejecting chan struct{}
	log       hclog.Logger
}

func (l *capListener) Accept() (net.Conn, error) {
	for {
		c, err := l.Listener.Accept()
		if err != nil {
			return nil, err
		}
		select {
		case l.slots <- struct{}{}:
			return &conn{Conn: c, release: func() { <-l.slots }}, nil
		default:
		}
		select {
		case l.rejecting <- struct{}{}:
			go func() {
				defer func() { <-l.rejecting }()
				reject(c)
			}()
		default:
			c.Close()
		}
		l.log.Debug("refusing a connection beyond the cap", "max", cap(l.slots))
	}
}

// reject answers c 503 with a JSON-RPC error and closes it. It reads the
// start of the request first (at most rejectWait), so the client is not
// reset before it reads the answer.
func reject(c net.Conn) {
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(rejectWait))
	buf := make([]byte, 4096)
	var head []byte
	for len(head) < 16<<10 && !bytes.Contains(head, []byte("\r\n\r\n")) {
		n, err := c.Read(buf)
		head = append(head, buf[:n]...)
		if err != nil {
			break
		}
	}
	_, _ = c.Write(errorResponse(http.StatusServiceUnavailable, msgTooManyConns))
}

// errorResponse is a whole HTTP/1.1 response that closes the connection,
// with a JSON-RPC error body, for the answers written below net/http.
func errorResponse(status int, message string) []byte {
	body := append(protocol.EncodeError(nil, jsonrpc.CodeInvalidRequest, message), '\n')
	var b bytes.Buffer
	fmt.Fprintf(&b, "HTTP/1.1 %d %s\r\nContent-Type: application/json\r\nContent-Length: %d\r\nConnection: close\r\n\r\n", status, http.StatusText(status), len(body))
	b.Write(body)
	return b.Bytes()
}

// plainErrorHeaders is how net/http answers a request it cannot parse
// itself (a malformed request line, headers too large, an unsupported
// transfer encoding): "HTTP/1.1 CODE TEXT" + these headers + a text body,
// in one write on the connection.
const plainErrorHeaders = "\r\nContent-Type: text/plain; charset=utf-8\r\nConnection: close\r\n\r\n"

// conn is one connection of the server: it frees its slot on Close, and
// turns net/http's own plain-text errors into JSON-RPC error bodies, as
// every other answer of the front is (docs/http.md#3).
type conn struct {
	net.Conn
	release func()
	once    sync.Once
}

func (c *conn) Close() error {
	err := c.Conn.Close()
	c.once.Do(c.release)
	return err
}

func (c *conn) Write(b []byte) (int, error) {
	if out, ok := jsonPlainError(b); ok {
		if _, err := c.Conn.Write(out); err != nil {
			return 0, err
		}
		return len(b), nil
	}
	return c.Conn.Write(b)
}

// jsonPlainError rewrites one of net/http's plain-text error responses as
// the same status with a JSON-RPC error body; ok is false for anything else.
func jsonPlainError(b []byte) ([]byte, bool) {
	rest, found := bytes.CutPrefix(b, []byte("HTTP/1.1 "))
	if !found {
		return nil, false
	}
	statusLine, text, found := bytes.Cut(rest, []byte(plainErrorHeaders))
	if !found || len(statusLine) < 3 {
		return nil, false
	}
	status, err := strconv.Atoi(string(statusLine[:3]))
	if err != nil || status < 400 {
		return nil, false
	}
	message := string(bytes.TrimSpace(text))
	if message == "" {
		message = http.StatusText(status)
	}
	return errorResponse(status, message), true
}
