package stdio

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"sync"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdkmcp "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/buildguard/buildguard/agentproto"
	"github.com/buildguard/buildguard/mcp/protocol"
	"github.com/buildguard/buildguard/service/mcptask"
)

// Frame and wait limits of the stdio contract (docs/mcp-server.md#2.1, docs/mcp-server.md#5).
const (
	// MaxFrameUnits is the longest accepted line, in UTF-16 code units,
	// excluding the line terminator.
	MaxFrameUnits = 65536
	// DefaultDrainTimeout bounds the wait at EOF for a cancelled batch.
	DefaultDrainTimeout = 2 * time.Second
	// DefaultBuildDrainTimeout bounds the wait at EOF for cancelled calls of
	// the build tool: each stops its build's process group (a grace period,
	// then SIGKILL) and waits for the agent to acknowledge BUILD failed.
	DefaultBuildDrainTimeout = 30 * time.Second

	// A UTF-16 unit takes at most 3 UTF-8 bytes, so a longer line is too long
	// whatever it holds; +1 for an optional '\r'.
	maxFrameBytes = 3*MaxFrameUnits + 1
)

// The JSON-RPC errors only the stdio transport answers.
const (
	msgFrameTooLarge = "Request exceeds 65536 characters"
	msgIDActive      = "Request ID is already active"
	msgBatchActive   = "Verification batch active; retry after completion or cancellation"
	// codeBatchActive is beyond the standard codes in package jsonrpc.
	codeBatchActive = -32000
)

// Transport is a strict newline-delimited JSON-RPC transport for an
// sdkmcp.Server (docs/mcp-server.md#2 and docs/mcp-server.md#5, docs/decisions.md#D4 and docs/decisions.md#D5). It answers
// every malformed line, invalid envelope, invalid id, non-object params,
// invalid initialize version, malformed tools/call and unknown method itself,
// so the SDK only ever sees valid requests for initialize, ping, tools/list
// and tools/call, and the cancellations it must act on.
//
// Requests are handed to the SDK one at a time: the reader waits for each
// answer before it reads the next line, except for a call of BackgroundTool
// with valid arguments, which occupies the single batch slot while reading
// goes on. While the slot
// is busy, the same id is refused with -32600, ping and tools/list are served,
// and everything else gets -32000. notifications/cancelled naming the batch
// cancels its context in the SDK and suppresses its answer; EOF does the same,
// waits at most DrainTimeout for the batch, and only then reports EOF to the
// SDK, so no answer in flight is lost.
//
// Calls of BuildTool run beside the reader without taking the slot: while
// one runs, every other request is served as usual (a second build call
// reaches the tool too, which queues it behind the first: docs/decisions.md#D18). notifications/cancelled naming a
// build call, or EOF, cancels it as it does the batch; at EOF the wait is
// BuildDrainTimeout. A tasks/result, which waits for its task, runs beside
// the reader in the same way. Of the server's own messages only responses and
// notifications/progress reach Out.
//
// A Transport is good for one Connect.
type Transport struct {
	// In is the request stream (stdin). Required.
	In io.Reader
	// Out receives one compact JSON-RPC response per line (the saved stdout).
	// Writes are serialised. Required.
	Out io.Writer
	// BackgroundTool names the tool whose calls run on the batch slot.
	// Empty means none: every call is answered before the next line is read.
	BackgroundTool string
	// InvalidArgs reports whether a call of BackgroundTool with these
	// arguments (nil when absent) fails its argument checks. Such a call is
	// answered like any other request, at once and in order, and never takes
	// the batch slot. Nil means every call of BackgroundTool takes the slot.
	InvalidArgs func(args json.RawMessage) bool
	// DrainTimeout bounds the wait at EOF for the cancelled batch to finish.
	// Zero means DefaultDrainTimeout.
	DrainTimeout time.Duration
	// BuildTool names the tool whose calls run beside the reader without the
	// batch slot (docs/safe-build.md#6). Empty means none.
	BuildTool string
	// BuildDrainTimeout bounds the wait at EOF for cancelled BuildTool
	// calls. Zero means DefaultBuildDrainTimeout.
	BuildDrainTimeout time.Duration
	// Logger receives transport diagnostics (never protocol). Nil means none.
	Logger hclog.Logger

	conn *conn // set by Connect
}

var _ sdkmcp.Transport = (*Transport)(nil)

// Ended is closed once the transport reported EOF to the SDK (after its
// drain); nil before Connect.
func (t *Transport) Ended() <-chan struct{} {
	if t.conn == nil {
		return nil
	}
	return t.conn.eof
}

// DrainExpired reports, once Ended is closed, whether the wait at EOF for
// the cancelled batch ran out before the batch finished.
func (t *Transport) DrainExpired() bool {
	return t.conn != nil && t.conn.drainExpired
}

// Connect implements sdkmcp.Transport: it starts reading In.
func (t *Transport) Connect(context.Context) (sdkmcp.Connection, error) {
	if t.In == nil || t.Out == nil {
		return nil, errors.New("connecting stdio transport: In and Out are required")
	}
	c := &conn{
		in:       t.In,
		out:      t.Out,
		bgTool:   t.BackgroundTool,
		badArgs:  t.InvalidArgs,
		drain:    t.DrainTimeout,
		build:    t.BuildTool,
		bdrain:   t.BuildDrainTimeout,
		builds:   map[string]*call{},
		log:      t.Logger,
		msgs:     make(chan jsonrpc.Message),
		eof:      make(chan struct{}),
		closed:   make(chan struct{}),
		stopped:  make(chan struct{}),
		inflight: map[string]*call{},
	}
	if c.drain <= 0 {
		c.drain = DefaultDrainTimeout
	}
	if c.bdrain <= 0 {
		c.bdrain = DefaultBuildDrainTimeout
	}
	if c.log == nil {
		c.log = hclog.NewNullLogger()
	}
	t.conn = c
	go c.readLoop()
	return c, nil
}

// conn is the sdkmcp.Connection of a Transport.
type conn struct {
	in      io.Reader
	out     io.Writer
	bgTool  string
	badArgs func(json.RawMessage) bool
	drain   time.Duration
	build   string        // the build tool, "" for none
	bdrain  time.Duration // the wait at EOF for build calls
	log     hclog.Logger

	msgs      chan jsonrpc.Message // reader → SDK
	eof       chan struct{}        // closed once input ended and in-flight work drained
	closed    chan struct{}        // closed by Close
	stopped   chan struct{}        // closed once the reader reads no more
	closeOnce sync.Once

	wmu sync.Mutex // one line at a time on out

	mu       sync.Mutex
	seq      uint64
	inflight map[string]*call // by token
	batch    *call            // the active background call, if any
	builds   map[string]*call // the running build calls, by token

	// drainExpired is set before eof is closed: the batch outlived the
	// wait at EOF.
	drainExpired bool
}

// call is one request handed to the SDK under a token id.
type call struct {
	token      string
	id         protocol.ID
	background bool
	cancelled  bool          // its answer is suppressed
	answered   chan struct{} // closed when the SDK wrote (or dropped) its answer
}

// SessionID implements sdkmcp.Connection; stdio has no session id.
func (c *conn) SessionID() string { return "" }

// Read implements sdkmcp.Connection.
func (c *conn) Read(ctx context.Context) (jsonrpc.Message, error) {
	select {
	case m := <-c.msgs:
		return m, nil
	case <-c.eof:
		return nil, io.EOF
	case <-c.closed:
		return nil, sdkmcp.ErrConnectionClosed
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// deadliner is an input whose blocked reads can be interrupted: a pipe or a
// socket (*os.File, net.Conn).
type deadliner interface{ SetReadDeadline(time.Time) error }

// closeWait bounds how long Close waits for the reader to stop on an input
// with deadlines: the reader is at most handling one line when its read
// returns.
const closeWait = 5 * time.Second

// Close implements sdkmcp.Connection. It does not close In or Out. When In
// supports deadlines, a read blocked on it returns at once, and the reader
// stops without consuming further input; Close returns once it has stopped
// and cleared the deadline again (at most closeWait), so the caller may set
// a deadline of its own on In.
func (c *conn) Close() error {
	c.closeOnce.Do(func() {
		close(c.closed)
		d, ok := c.in.(deadliner)
		if !ok {
			return
		}
		_ = d.SetReadDeadline(time.Unix(1, 0))
		select {
		case <-c.stopped:
		case <-time.After(closeWait):
			c.log.Warn("the reader did not stop within the wait after Close", "waited", closeWait)
		}
	})
	return nil
}

// isClosed reports whether Close was called.
func (c *conn) isClosed() bool {
	select {
	case <-c.closed:
		return true
	default:
		return false
	}
}

// Write implements sdkmcp.Connection. Responses reach Out, each with the id
// literal of its request, and so do progress notifications (a tool reports
// them only for a request that asked with a progressToken); every other
// server-initiated message is dropped, because stdout carries nothing else.
func (c *conn) Write(_ context.Context, msg jsonrpc.Message) error {
	resp, ok := msg.(*jsonrpc.Response)
	if !ok {
		if req, isReq := msg.(*jsonrpc.Request); isReq && !req.IsCall() && req.Method == protocol.MethodProgress {
			line, err := jsonrpc.EncodeMessage(req)
			if err != nil {
				return fmt.Errorf("encoding a progress notification: %w", err)
			}
			return c.writeLine(line)
		}
		c.log.Debug("dropping server-initiated message", "type", fmt.Sprintf("%T", msg))
		return nil
	}
	tok, _ := resp.ID.Raw().(string)
	c.mu.Lock()
	cl := c.inflight[tok]
	delete(c.inflight, tok)
	if cl != nil && cl == c.batch {
		c.batch = nil
	}
	delete(c.builds, tok)
	c.mu.Unlock()
	if cl == nil {
		c.log.Warn("dropping response to an unknown request", "id", fmt.Sprint(resp.ID.Raw()))
		return nil
	}
	defer close(cl.answered)
	if cl.cancelled {
		c.log.Debug("suppressing the answer of a cancelled request")
		return nil
	}
	return c.writeLine(protocol.EncodeResponse(cl.id.Raw, resp))
}

// readLoop reads frames until EOF, then drains and reports EOF.
func (c *conn) readLoop() {
	stop := sync.OnceFunc(func() { close(c.stopped) })
	defer stop()
	br := bufio.NewReaderSize(c.in, 64<<10)
	for {
		line, tooLong, err := readFrame(br)
		switch {
		case tooLong:
			c.writeError(nil, jsonrpc.CodeInvalidRequest, msgFrameTooLarge)
		case len(line) > 0:
			c.handleLine(line)
		}
		if c.isClosed() {
			if d, ok := c.in.(deadliner); ok {
				_ = d.SetReadDeadline(time.Time{})
			}
			return
		}
		if err != nil {
			if !errors.Is(err, io.EOF) {
				c.log.Warn("reading requests failed; stopping", "error", err)
			}
			break
		}
	}
	stop() // finish may wait for builds: a Close meanwhile need not
	c.finish()
}

// finish cancels the active batch and the running build calls, waits for
// each at most its drain timeout (c.drain for the batch, c.bdrain for a
// build), then lets Read report EOF.
func (c *conn) finish() {
	type wait struct {
		cl    *call
		limit time.Duration
		what  string
	}
	var waits []wait
	var cancels []*call
	c.mu.Lock()
	if b := c.batch; b != nil {
		waits = append(waits, wait{b, c.drain, "batch"})
	}
	for _, b := range c.builds {
		waits = append(waits, wait{b, c.bdrain, "build"})
	}
	for _, w := range waits {
		if !w.cl.cancelled {
			w.cl.cancelled = true
			cancels = append(cancels, w.cl)
		}
	}
	c.mu.Unlock()
	for _, cl := range cancels {
		c.deliver(cancelNotification(cl.token, "stdin closed"))
	}
	start := time.Now()
	for _, w := range waits {
		timer := time.NewTimer(max(0, w.limit-time.Since(start)))
		select {
		case <-w.cl.answered:
		case <-timer.C:
			c.log.Warn(w.what+" did not finish after cancellation", "waited", w.limit)
			c.drainExpired = true
		case <-c.closed:
		}
		timer.Stop()
	}
	close(c.eof)
}

// readFrame reads one line. A line longer than MaxFrameUnits is consumed to
// its end without being buffered and reported as tooLong. err is io.EOF after
// the last line (which may lack a newline).
func readFrame(br *bufio.Reader) (line []byte, tooLong bool, err error) {
	var buf []byte
	for {
		chunk, e := br.ReadSlice('\n')
		if !tooLong {
			content := len(buf) + len(chunk)
			if len(chunk) > 0 && chunk[len(chunk)-1] == '\n' {
				content--
			}
			if content > maxFrameBytes {
				tooLong, buf = true, nil
			} else {
				buf = append(buf, chunk...)
			}
		}
		if errors.Is(e, bufio.ErrBufferFull) {
			continue
		}
		err = e
		break
	}
	if tooLong {
		return nil, true, err
	}
	buf = bytes.TrimSuffix(buf, []byte("\n"))
	if agentproto.UTF16LenBytes(bytes.TrimSuffix(buf, []byte("\r"))) > MaxFrameUnits {
		return nil, true, err
	}
	return buf, false, err
}

// handleLine answers or forwards one non-empty line. A panic is answered
// with -32603 and reading goes on.
func (c *conn) handleLine(line []byte) {
	var answerID json.RawMessage
	defer func() {
		if r := recover(); r != nil {
			c.log.Error("panic while handling a request", "panic", fmt.Sprint(r))
			c.writeError(answerID, jsonrpc.CodeInternalError, protocol.MsgInternal)
		}
	}()
	line = protocol.ValidUTF8(protocol.TrimJSONSpace(line))
	if len(line) == 0 {
		return
	}
	m, rerr := protocol.Parse(line)
	if rerr != nil {
		c.writeLineLogged(rerr.Encode())
		return
	}
	if !m.HasID {
		c.notification(m)
		return
	}
	answerID = m.ID.Raw
	c.request(m)
}

// request checks a request with a valid envelope and id (docs/mcp-server.md#2.2 steps 4–6,
// docs/mcp-server.md#5) and hands it to the SDK.
func (c *conn) request(m protocol.Message) {
	id, method := m.ID, m.Method
	c.mu.Lock()
	b := c.batch
	buildActive := c.buildWithIDLocked(id.Key) != nil
	c.mu.Unlock()
	if buildActive {
		c.writeError(id.Raw, jsonrpc.CodeInvalidRequest, msgIDActive)
		return
	}
	if b != nil {
		if b.id.Key == id.Key {
			c.writeError(id.Raw, jsonrpc.CodeInvalidRequest, msgIDActive)
			return
		}
		if method != protocol.MethodPing && method != protocol.MethodToolsList && method != protocol.MethodDiscover {
			c.writeError(id.Raw, codeBatchActive, msgBatchActive)
			return
		}
	}
	forward, tool, args, rerr := m.Forward()
	if rerr != nil {
		c.writeLineLogged(rerr.Encode())
		return
	}
	background := method == protocol.MethodToolsCall && c.bgTool != "" && tool == c.bgTool && (c.badArgs == nil || !c.badArgs(args))
	// A tasks/result waits for its task (docs/decisions.md#D17): it runs
	// beside the reader as a build call does.
	concurrent := method == protocol.MethodToolsCall && c.build != "" && tool == c.build || method == mcptask.MethodResult

	c.mu.Lock()
	if background && c.batch != nil { // only this goroutine starts batches; kept as a guard
		c.mu.Unlock()
		c.writeError(id.Raw, codeBatchActive, msgBatchActive)
		return
	}
	c.seq++
	cl := &call{token: "bg-" + strconv.FormatUint(c.seq, 10), id: id, background: background || concurrent, answered: make(chan struct{})}
	c.inflight[cl.token] = cl
	if background {
		c.batch = cl
	}
	if concurrent {
		c.builds[cl.token] = cl
	}
	c.mu.Unlock()

	jid, err := jsonrpc.MakeID(cl.token)
	if err != nil { // a string id always converts
		panic(fmt.Sprintf("making token id: %v", err))
	}
	if !c.deliver(&jsonrpc.Request{ID: jid, Method: method, Params: forward}) {
		return
	}
	if !cl.background {
		select {
		case <-cl.answered:
		case <-c.closed:
		}
	}
}

// buildWithIDLocked returns the running build call with id key, if any.
func (c *conn) buildWithIDLocked(key string) *call {
	for _, cl := range c.builds {
		if cl.id.Key == key {
			return cl
		}
	}
	return nil
}

// notification handles a message without id: only a cancellation of the
// active batch (docs/mcp-server.md#5) or of a running build call
// (docs/safe-build.md#6) has an effect; everything else is ignored silently.
func (c *conn) notification(m protocol.Message) {
	rid, reason, ok := m.CancelTarget()
	if !ok {
		return
	}
	c.mu.Lock()
	b := c.batch
	if b == nil || b.id.Key != rid.Key {
		b = c.buildWithIDLocked(rid.Key)
	}
	hit := b != nil && !b.cancelled && b.id.Key == rid.Key
	if hit {
		b.cancelled = true
	}
	c.mu.Unlock()
	if hit {
		c.deliver(cancelNotification(b.token, reason))
	}
}

// cancelNotification is the notifications/cancelled the SDK acts on: it
// cancels the context of the request with that token.
func cancelNotification(token, reason string) *jsonrpc.Request {
	p, _ := json.Marshal(struct {
		RequestID string `json:"requestId"`
		Reason    string `json:"reason,omitempty"`
	}{token, reason})
	return &jsonrpc.Request{Method: protocol.MethodCancelled, Params: p}
}

// deliver hands m to the SDK's Read; false when the connection closed.
func (c *conn) deliver(m jsonrpc.Message) bool {
	select {
	case c.msgs <- m:
		return true
	case <-c.closed:
		return false
	}
}

// writeError writes an error response; id nil means "id":null.
func (c *conn) writeError(id json.RawMessage, code int64, message string) {
	c.writeLineLogged(protocol.EncodeError(id, code, message))
}

// writeLineLogged writes one line and logs a failure.
func (c *conn) writeLineLogged(line []byte) {
	if err := c.writeLine(line); err != nil {
		c.log.Warn("writing response failed", "error", err)
	}
}

func (c *conn) writeLine(line []byte) error {
	c.wmu.Lock()
	defer c.wmu.Unlock()
	_, err := c.out.Write(append(line, '\n'))
	return err
}
