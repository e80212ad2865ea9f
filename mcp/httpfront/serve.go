package httpfront

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log"
	"net"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"

	"github.com/buildguard/buildguard/mcp/protocol"
)

// Limits bound what one client, with or without the token, can hold of
// the server (docs/http.md#2): a connection that stalls or idles is
// closed; of the connections that have not sent a whole request, at most
// MaxPending are kept (the oldest waiting on its peer is closed for a new
// one); and a connection beyond MaxConns, when none of those is left to
// close, is answered 503 and closed at once. Each zero field means its
// default in DefaultLimits.
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
	// MaxPending caps the connections open at once that have not sent a
	// whole request yet (headers still arriving, or nothing sent): all a
	// process without the token can hold, since every request without it
	// is answered and closed. It is at most MaxConns.
	MaxPending int
}

// DefaultLimits are the limits of `buildguard mcp --http`.
var DefaultLimits = Limits{
	ReadHeaderTimeout: 10 * time.Second,
	BodyTimeout:       30 * time.Second,
	IdleTimeout:       60 * time.Second,
	MaxConns:          64,
	MaxPending:        16,
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
	if l.MaxPending <= 0 {
		l.MaxPending = DefaultLimits.MaxPending
	}
	l.MaxPending = min(l.MaxPending, l.MaxConns)
	return l
}

// The error texts of the connection layer.
const (
	msgTooManyConns = "Service Unavailable: too many connections; retry when a call has finished"
)

// waitingAfter is how long a connection is never closed for a newer one:
// time for its request to arrive, even on a busy machine.
const waitingAfter = 100 * time.Millisecond

// admitWait bounds how long a connection, when every place is taken and
// none can be closed yet, waits for one before it is answered 503; it
// outlasts waitingAfter.
const admitWait = 500 * time.Millisecond

// admitPoll is how often a connection that waits for a place looks again.
const admitPoll = 10 * time.Millisecond

// rejectWait bounds how long a connection beyond the cap is kept to read
// the start of its request, so it sees the 503 rather than a reset.
const rejectWait = time.Second

// maxRejecting bounds the connections being answered 503 at once; beyond
// it they are closed without an answer.
const maxRejecting = 64

// logEvery is the least time between two log lines of one kind that a
// peer without the token can cause (a connection refused or closed for a
// newer one, an error of net/http's): a flood writes a line per period,
// with how many alike were left out, never a line per connection.
const logEvery = time.Minute

// Serve serves h on ln until ctx is done; then it cancels the calls in
// flight, stops accepting and waits at most ShutdownTimeout for their
// answers before closing every connection. It returns nil after such a
// stop. h's Limits apply.
func Serve(ctx context.Context, ln net.Listener, h *Handler) error {
	lim := h.limits
	table := &connTable{
		Listener: ln, maxConns: lim.MaxConns, maxPending: lim.MaxPending,
		rejecting: make(chan struct{}, maxRejecting), changed: make(chan struct{}, 1),
		refused: &sparseLog{log: h.log, every: logEvery},
		evicted: &sparseLog{log: h.log, every: logEvery},
	}
	hs := &http.Server{
		Handler:           h,
		ReadHeaderTimeout: lim.ReadHeaderTimeout,
		IdleTimeout:       lim.IdleTimeout,
		ErrorLog:          log.New(&sparseLog{log: h.log, every: logEvery}, "", 0),
		ConnState:         table.track,
	}
	served := make(chan error, 1)
	go func() { served <- hs.Serve(table) }()
	select {
	case err := <-served:
		h.Close()
		return fmt.Errorf("serving MCP over HTTP: %w", err)
	case <-ctx.Done():
	}
	h.Close()
	table.stop()
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

// connTable is the server's listener: it hands out at most maxConns
// connections at once and knows which of them have not yet read a whole
// request (net/http's StateNew: headers still arriving, or nothing sent
// yet), oldest first.
//
// Every request without the token is answered and its connection closed,
// so such pending connections are all a peer without the token can hold
// (docs/decisions.md#D23). A new connection that would make more than
// maxPending of them, or more than maxConns in all, closes the oldest
// pending one that waits on its peer (conn.waiting: open for waitingAfter
// and in a read) to make room; only when none is left, within admitWait,
// is it answered 503. A client with the token then finds a place however
// many strangers connect and reconnect: its request arrives with its
// connection, and a connection younger than waitingAfter, or whose request
// is being parsed, is never the one closed. While a connection waits for a
// place, the next ones wait in the listener's queue, so a flood cannot
// outrun the table.
//
// At a stop, every pending connection is closed at once, and every one
// accepted after it: Shutdown would wait for such a connection up to its
// ReadHeaderTimeout (it counts one as idle only after 5 s), so a peer
// sending half a header could hold a stop for the whole ShutdownTimeout
// (docs/http.md#1). A connection whose request was read is left to
// Shutdown: its call gets its answer, and an idle kept-alive one Shutdown
// closes itself.
type connTable struct {
	net.Listener
	maxConns, maxPending int
	rejecting            chan struct{}
	changed              chan struct{} // a place may have freed
	refused, evicted     *sparseLog

	mu       sync.Mutex
	open     int     // connections handed out and not yet closed
	pending  []*conn // handed out, no whole request read yet; oldest first
	stopping bool
}

func (t *connTable) Accept() (net.Conn, error) {
	for {
		c, err := t.Listener.Accept()
		if err != nil {
			return nil, err
		}
		nc := &conn{Conn: c, table: t, accepted: time.Now()}
		switch t.admitWaiting(nc) {
		case admitOK:
			return nc, nil
		case admitStopping:
			_ = c.Close()
			continue
		}
		select {
		case t.rejecting <- struct{}{}:
			go func() {
				defer func() { <-t.rejecting }()
				reject(c)
			}()
		default:
			_ = c.Close()
		}
		t.refused.Debug("refusing a connection beyond the cap", "max", t.maxConns)
	}
}

// The outcomes of connTable.admit.
const (
	admitOK = iota
	admitFull
	admitStopping
)

// admitWaiting is admit, given up to admitWait for a place to free when
// every connection is taken and none can be closed yet: the connections
// accepted just before may not have had their first read. Meanwhile new
// connections wait in the listener's queue, in the order they came.
func (t *connTable) admitWaiting(nc *conn) int {
	res := t.admit(nc)
	if res != admitFull {
		return res
	}
	timer := time.NewTimer(admitWait)
	defer timer.Stop()
	tick := time.NewTicker(admitPoll)
	defer tick.Stop()
	for res == admitFull {
		select {
		case <-timer.C:
			return admitFull
		case <-t.changed:
		case <-tick.C:
		}
		res = t.admit(nc)
	}
	return res
}

// admit gives nc a place, closing the oldest pending connections that wait
// on their peers when nc would make too many.
func (t *connTable) admit(nc *conn) int {
	var dropped []*conn
	defer func() {
		for _, c := range dropped {
			_ = c.Conn.Close()
		}
		if len(dropped) > 0 {
			t.evicted.Debug("closing the oldest connections that sent no whole request, for newer ones", "max", t.maxPending)
		}
	}()
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.stopping {
		return admitStopping
	}
	for len(t.pending) >= t.maxPending || t.open >= t.maxConns {
		i := slices.IndexFunc(t.pending, (*conn).waiting)
		if i < 0 {
			break
		}
		c := t.pending[i]
		t.pending = slices.Delete(t.pending, i, i+1)
		t.releaseLocked(c)
		dropped = append(dropped, c)
	}
	if t.open >= t.maxConns {
		return admitFull
	}
	t.open++
	t.pending = append(t.pending, nc)
	return admitOK
}

// releaseLocked frees c's place, once. t.mu is held.
func (t *connTable) releaseLocked(c *conn) {
	if !c.released {
		c.released = true
		t.open--
	}
}

func (t *connTable) release(c *conn) {
	t.mu.Lock()
	t.dropPendingLocked(c)
	t.releaseLocked(c)
	t.mu.Unlock()
	t.signal()
}

// signal wakes an admitWaiting: a place may have freed.
func (t *connTable) signal() {
	select {
	case t.changed <- struct{}{}:
	default:
	}
}

func (t *connTable) dropPendingLocked(c *conn) {
	if i := slices.Index(t.pending, c); i >= 0 {
		t.pending = slices.Delete(t.pending, i, i+1)
	}
}

// track is the server's ConnState hook: a connection that read a whole
// request (or closed) is no longer pending.
func (t *connTable) track(c net.Conn, state http.ConnState) {
	if state == http.StateNew {
		return // admit registered it
	}
	nc, ok := c.(*conn)
	if !ok || nc.active.Load() {
		return
	}
	nc.active.Store(true)
	t.mu.Lock()
	t.dropPendingLocked(nc)
	t.mu.Unlock()
	t.signal()
}

// stop closes every pending connection, and from now on every new one.
func (t *connTable) stop() {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.stopping = true
	for _, c := range t.pending {
		_ = c.Conn.Close()
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

// sparseLog writes the debug lines a peer without the token can cause at
// most once per period each: a line that comes sooner is counted, and the
// next line written says how many alike were left out. It is also the
// writer of net/http's ErrorLog (one line per Write).
type sparseLog struct {
	log   hclog.Logger
	every time.Duration

	mu     sync.Mutex
	next   time.Time
	missed int
}

// Debug logs msg at debug level unless a line went out less than a period ago.
func (s *sparseLog) Debug(msg string, args ...any) {
	s.mu.Lock()
	now := time.Now()
	if now.Before(s.next) {
		s.missed++
		s.mu.Unlock()
		return
	}
	missed := s.missed
	s.missed, s.next = 0, now.Add(s.every)
	s.mu.Unlock()
	if missed > 0 {
		args = append(args, "alike_left_out", missed)
	}
	s.log.Debug(msg, args...)
}

// Write logs one line of net/http's ErrorLog: a panic that reached
// net/http (a bug, not a peer) always, at error level; the rest sparsely.
func (s *sparseLog) Write(b []byte) (int, error) {
	line := strings.TrimSpace(string(b))
	if strings.HasPrefix(line, "http: panic serving") {
		s.log.Error(line)
		return len(b), nil
	}
	s.Debug(line)
	return len(b), nil
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

// conn is one connection of the server: it frees its place in the table
// on Close, tells the table whether it waits on its peer, and turns
// net/http's own plain-text errors into JSON-RPC error bodies, as every
// other answer of the front is (docs/http.md#3).
type conn struct {
	net.Conn
	table    *connTable
	accepted time.Time    // set before the table hands c out
	reading  atomic.Int32 // reads in progress, until c read a whole request
	active   atomic.Bool  // has read a whole request
	released bool         // its place is free; guarded by table.mu
}

// waiting reports whether c, accepted at least waitingAfter ago, is in a
// read: its peer has sent nothing more than what was read, and the server
// waits on it. A peer trickling its header byte by byte is waiting most of
// the time.
func (c *conn) waiting() bool {
	return c.reading.Load() > 0 && time.Since(c.accepted) >= waitingAfter
}

func (c *conn) Read(b []byte) (int, error) {
	if c.active.Load() {
		return c.Conn.Read(b)
	}
	c.reading.Add(1)
	defer c.reading.Add(-1)
	return c.Conn.Read(b)
}

func (c *conn) Close() error {
	err := c.Conn.Close()
	c.table.release(c)
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
