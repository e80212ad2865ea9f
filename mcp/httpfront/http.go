package httpfront

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"mime"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdkmcp "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/buildguard/buildguard/mcp/protocol"
	"github.com/buildguard/buildguard/service/mcptask"
)

// Streamable HTTP serving (docs/decisions.md#D14, docs/http.md).
const (
	// HTTPPath is where the MCP endpoint is served.
	HTTPPath = "/mcp"
	// MaxHTTPBody is the largest request body accepted; a larger one is 413.
	MaxHTTPBody = 1 << 20
	// maxForwardedBody bounds the canonical request the SDK gets for a body
	// the front accepted: encoding/json writes <, >, & as six bytes and
	// U+2028, U+2029 (three bytes) as six, so a body of MaxHTTPBody can
	// grow up to six times when its params are encoded again. The front
	// has applied the client's limit already; the SDK's must not refuse
	// what it let through.
	maxForwardedBody = 6*MaxHTTPBody + 64<<10
	// TokenParam is the query parameter that may carry the token.
	TokenParam = "token"
	// ShutdownTimeout bounds the stop after SIGINT/SIGTERM: in-flight calls
	// are cancelled first, then the server waits this long for their answers.
	ShutdownTimeout = 4 * time.Second

	// callHeader carries a request's registry token from the front to the
	// middleware; a client's own header of that name is removed first.
	callHeader = "Buildguard-Call"
	// sessionHeader carries the session id the front gives a client at
	// initialize, which scopes its notifications/cancelled.
	sessionHeader = "Mcp-Session-Id"
	// versionHeader is the protocol version a request states.
	versionHeader = "MCP-Protocol-Version"
)

// The error texts of the HTTP front.
const (
	msgUnauthorized = "Unauthorized: send the token printed at startup as Authorization: Bearer TOKEN or as the token query parameter"
	msgForbidden    = "Forbidden: Origin and Host must name this server on a loopback address"
	msgTooLarge     = "Request body exceeds 1048576 bytes"
	msgPostOnly     = "Method Not Allowed: send JSON-RPC messages with POST"
	msgNotFound     = "Not Found: the MCP endpoint is " + HTTPPath
	msgEmptyBody    = "Invalid Request: the body is empty"
	msgBodyTimeout  = "Request Timeout: the body did not arrive in time"
	msgBodyFailed   = "Invalid Request: reading the body failed"
	msgUnsupported  = "unsupported protocol version"
)

// Handler serves an SDK server over streamable HTTP at HTTPPath: go-sdk's
// StreamableHTTPHandler (stateless; JSON responses, or an event stream for
// a tools/call that asked for progress) behind the checks of
// docs/decisions.md#D14. In order: the path, Origin and Host (403 unless they name this
// server on a loopback address: no DNS rebinding), the token (401, compared
// in constant time), POST, the body (413 over MaxHTTPBody), then the same
// envelope and params checks as stdio (400 for a body that is no valid
// JSON-RPC message, 200 with the JSON-RPC error for a request the server
// refuses). The SDK then gets a canonical request whose id is a token of
// this handler, and its answer goes back with the client's id literal, in
// the encoding stdio uses.
//
// Every request is served on its own (stateless): a tools/call's context is
// cancelled when its HTTP request ends, when a notifications/cancelled POST
// names its id (then its answer is suppressed: 204), or when Close is called.
type Handler struct {
	calls *Calls
	sdk   http.Handler
	// sdkStream answers with an event stream: for a tools/call that asked
	// for progress, so its notifications/progress reach the client before
	// the answer.
	sdkStream http.Handler
	token     [sha256.Size]byte
	log       hclog.Logger
	versions  []string // served, newest first
	limits    Limits
	fixture   *Fixture // nil for buildguard
	compact   compactMemo
	tasks     *mcptask.Store // answers tasks/get directly; nil for none
	info      *sdkmcp.Implementation

	ctx    context.Context // done once Close is called
	cancel context.CancelFunc
}

// httpCall is one request in flight through a Handler.
type httpCall struct {
	session   string // the client's session id; "" for none
	id        protocol.ID
	ctx       context.Context
	cancel    context.CancelFunc
	cancelled bool // by notifications/cancelled; guarded by Calls.mu
}

// Config configures a Handler.
type Config struct {
	// SDK is the server every request is served by. Required.
	SDK *sdkmcp.Server
	// Calls is the registry of the requests in flight that SDK's receiving
	// middleware consults (Calls.Middleware). Required.
	Calls *Calls
	// Token is the token a request must carry. Required, not empty,
	// unless Fixture is set.
	Token string
	// Logger receives diagnostics (never the token). Nil means none.
	Logger hclog.Logger
	// SDKLogger is the SDK handler's logger. Nil means none.
	SDKLogger *slog.Logger
	// Versions are the protocol versions SDK serves, newest first: a
	// request whose MCP-Protocol-Version header names a later one is
	// answered "unsupported protocol version" with them. Nil means no such
	// check.
	Versions []string
	// Limits bound what one client can hold of the server. The zero value
	// means DefaultLimits.
	Limits Limits
	// Fixture, when set, makes the front serve a conformance fixture
	// instead of buildguard (docs/http.md#6.2). Nil means buildguard.
	Fixture *Fixture
	// Tasks, when set, is the task store SDK's tasks extension serves
	// (mcptask.Extension), and ServerInfo, then required, the identity SDK
	// was created with, which go-sdk names in every 2026-07-28 result: the
	// front then answers a tasks/get of a task the store holds itself, as
	// the SDK would (docs/http.md#4.1). Nil means every tasks/get goes to
	// the SDK.
	Tasks      *mcptask.Store
	ServerInfo *sdkmcp.Implementation
}

// Fixture is how the front serves the conformance fixture
// (harness/mcpfixture), which proves the front, the version handling and
// the task machinery with the official suite (docs/http.md#6.2): requests
// need no token, and Forward decides the methods served and the params the
// SDK gets, instead of the methods buildguard serves (protocol.Message.Forward).
// Every other rule of the front holds as for buildguard. It is a Go-level
// option only: package mcp never sets it, so `buildguard mcp --http` always
// needs its token.
type Fixture struct {
	// Forward returns the params the SDK gets for a request the front has
	// checked (envelope, 2026-07-28 _meta), or the refusal to answer: a
	// -32601 for a method the fixture does not serve is 404 at 2026-07-28,
	// as for buildguard. Required.
	Forward func(m protocol.Message) (json.RawMessage, *protocol.Refusal)
}

// New returns the streamable HTTP front of cfg.SDK.
func New(cfg Config) *Handler {
	ctx, cancel := context.WithCancel(context.Background())
	log := cfg.Logger
	if log == nil {
		log = hclog.NewNullLogger()
	}
	sdkLog := cfg.SDKLogger
	if sdkLog == nil {
		sdkLog = slog.New(slog.DiscardHandler)
	}
	h := &Handler{calls: cfg.Calls, token: sha256.Sum256([]byte(cfg.Token)), log: log, ctx: ctx, cancel: cancel,
		versions: cfg.Versions, limits: cfg.Limits.withDefaults(), fixture: cfg.Fixture, tasks: cfg.Tasks, info: cfg.ServerInfo}
	if cfg.Tasks != nil && cfg.ServerInfo == nil {
		panic("httpfront.New: Config.Tasks needs Config.ServerInfo")
	}
	opts := func(json bool) *sdkmcp.StreamableHTTPOptions {
		return &sdkmcp.StreamableHTTPOptions{
			Stateless:           true,
			JSONResponse:        json,
			MaxRequestBodyBytes: maxForwardedBody,
			Logger:              sdkLog,
			// The front checks Host and Origin itself, before the token
			// (sameLoopbackOrigin); the SDK's own check is narrower (it
			// takes LOCALHOST for a foreign name) and answers in another
			// shape, so a request the front let through is never refused
			// again below it.
			DisableLocalhostProtection: true,
		}
	}
	getServer := func(*http.Request) *sdkmcp.Server { return cfg.SDK }
	h.sdk = sdkmcp.NewStreamableHTTPHandler(getServer, opts(true))
	h.sdkStream = sdkmcp.NewStreamableHTTPHandler(getServer, opts(false))
	return h
}

// Close cancels every call in flight; later requests are cancelled at once.
func (h *Handler) Close() { h.cancel() }

// ServeHTTP implements http.Handler.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	defer func() {
		if p := recover(); p != nil {
			if p == http.ErrAbortHandler {
				panic(p)
			}
			h.log.Error("panic while serving an HTTP request", "panic", fmt.Sprint(p))
			writeHTTPError(w, http.StatusInternalServerError, &protocol.Refusal{Code: jsonrpc.CodeInternalError, Message: protocol.MsgInternal})
		}
	}()
	if !h.admit(w, r) {
		return
	}
	body, err := h.readBody(w, r)
	if err != nil {
		refuseBody(w, err)
		return
	}
	h.serveFrame(w, r, body)
}

// admit answers a request for another path, from a foreign origin, without
// the token or with another method than POST, and says whether it may go on.
func (h *Handler) admit(w http.ResponseWriter, r *http.Request) bool {
	if r.URL.Path != HTTPPath {
		closeUnread(w)
		writeHTTPError(w, http.StatusNotFound, &protocol.Refusal{Code: jsonrpc.CodeInvalidRequest, Message: msgNotFound})
		return false
	}
	if !sameLoopbackOrigin(r) {
		closeUnread(w)
		writeHTTPError(w, http.StatusForbidden, &protocol.Refusal{Code: jsonrpc.CodeInvalidRequest, Message: msgForbidden})
		return false
	}
	if h.fixture == nil && !h.authorized(r) {
		// A client without the token cannot keep the connection open,
		// nor hold it with a body it announced and never sends.
		closeUnread(w)
		w.Header().Set("WWW-Authenticate", "Bearer")
		writeHTTPError(w, http.StatusUnauthorized, &protocol.Refusal{Code: jsonrpc.CodeInvalidRequest, Message: msgUnauthorized})
		return false
	}
	if r.Method != http.MethodPost {
		closeUnread(w)
		w.Header().Set("Allow", http.MethodPost)
		writeHTTPError(w, http.StatusMethodNotAllowed, &protocol.Refusal{Code: jsonrpc.CodeInvalidRequest, Message: msgPostOnly})
		return false
	}
	return true
}

// closeUnread makes the connection of a request the front refuses before
// reading its body close right after the answer, without reading on:
// net/http would otherwise read what is left of an announced body before
// closing, without a deadline, so a peer that announces a body and never
// sends it would hold the connection (docs/http.md#2). What of the body has
// already arrived is read from the buffer; nothing more is waited for.
func closeUnread(w http.ResponseWriter) {
	w.Header().Set("Connection", "close")
	_ = http.NewResponseController(w).SetReadDeadline(time.Now())
}

// refuseBody answers a request whose body could not be read: too large, too
// slow, or broken off. Nothing more is served on its connection.
func refuseBody(w http.ResponseWriter, err error) {
	var mbe *http.MaxBytesError
	var ne net.Error
	closeUnread(w)
	switch {
	case errors.As(err, &mbe):
		writeHTTPError(w, http.StatusRequestEntityTooLarge, &protocol.Refusal{Code: jsonrpc.CodeInvalidRequest, Message: msgTooLarge})
	case errors.As(err, &ne) && ne.Timeout():
		writeHTTPError(w, http.StatusRequestTimeout, &protocol.Refusal{Code: jsonrpc.CodeInvalidRequest, Message: msgBodyTimeout})
	default:
		writeHTTPError(w, http.StatusBadRequest, &protocol.Refusal{Code: jsonrpc.CodeInvalidRequest, Message: msgBodyFailed})
	}
}

// serveFrame checks one JSON-RPC frame against the version and header
// rules of the transport, acts on a notification, and forwards a request.
func (h *Handler) serveFrame(w http.ResponseWriter, r *http.Request, body []byte) {
	frame := protocol.ValidUTF8(protocol.TrimJSONSpace(body))
	if len(frame) == 0 {
		writeHTTPError(w, http.StatusBadRequest, &protocol.Refusal{Code: jsonrpc.CodeInvalidRequest, Message: msgEmptyBody})
		return
	}
	m, rerr := protocol.Parse(frame)
	if rerr != nil {
		writeHTTPError(w, http.StatusBadRequest, rerr)
		return
	}
	if v := r.Header.Get(versionHeader); len(h.versions) > 0 && v > h.versions[0] {
		// A version after every one served: the SDK would take it for a
		// 2026-07-28-style request and ask for _meta instead.
		writeHTTPBody(w, http.StatusBadRequest, h.unsupportedVersion(m.ID.Raw, v))
		return
	}
	if m.HasID && r.Header.Get(versionHeader) >= protocol.Version20260728 && removedIn20260728[m.Method] {
		// The 2026-07-28 transport answers a method the revision removed
		// as an unknown endpoint: 404 (docs/http.md#4).
		writeHTTPError(w, http.StatusNotFound, &protocol.Refusal{ID: m.ID.Raw, Code: jsonrpc.CodeMethodNotFound, Message: "Method not found: " + m.Method})
		return
	}
	if !m.HasID {
		// Notifications have no answer; only a cancellation acts (docs/mcp-server.md#5).
		if id, _, ok := m.CancelTarget(); ok {
			h.calls.cancel(sessionOf(r), id)
		}
		w.WriteHeader(http.StatusAccepted)
		return
	}
	stateless := r.Header.Get(versionHeader) >= protocol.Version20260728
	if stateless {
		if missing := protocol.MissingMetaKeys(m.Params); len(missing) > 0 {
			// A 2026-07-28 request states its version and the client's
			// capabilities in every request (docs/http.md#4).
			writeHTTPError(w, http.StatusBadRequest, &protocol.Refusal{ID: m.ID.Raw, Code: jsonrpc.CodeInvalidParams,
				Message: "Invalid params: missing _meta keys: " + strings.Join(missing, ", ")})
			return
		}
	}
	forward, rerr := h.forward(m)
	if rerr != nil {
		status := http.StatusOK
		if stateless && rerr.Code == jsonrpc.CodeMethodNotFound {
			status = http.StatusNotFound // the 2026-07-28 transport's unknown method
		}
		writeHTTPError(w, status, rerr)
		return
	}
	if rerr := taskNameMismatch(r, m, forward); rerr != nil {
		writeHTTPError(w, http.StatusBadRequest, rerr)
		return
	}
	if answer, ok := h.directTaskGet(r, m, forward); ok {
		writeHTTPBody(w, http.StatusOK, answer)
		return
	}
	stream := m.Method == protocol.MethodToolsCall && asksProgress(forward) || m.Method == methodSubscriptionsListen
	h.serveRequest(w, r, m, forward, stream)
}

// forward is the params the SDK gets for m: those of buildguard's methods
// (protocol.Message.Forward), or the fixture's.
func (h *Handler) forward(m protocol.Message) (json.RawMessage, *protocol.Refusal) {
	if h.fixture != nil {
		return h.fixture.Forward(m)
	}
	forward, _, _, rerr := m.Forward()
	return forward, rerr
}

// methodSubscriptionsListen (2026-07-28) is answered with an event stream
// that stays open until the client closes it. buildguard does not serve it
// (-32601); the fixture does.
const methodSubscriptionsListen = "subscriptions/listen"

// taskNameMismatch is the -32020 of a 2026-07-28 tasks/get, tasks/update or
// tasks/cancel whose Mcp-Name header is not its taskId (SEP-2663 routing
// headers, SEP-2243 validation: HTTP 400), nil otherwise.
func taskNameMismatch(r *http.Request, m protocol.Message, forward json.RawMessage) *protocol.Refusal {
	if r.Header.Get("MCP-Protocol-Version") < protocol.Version20260728 {
		return nil
	}
	id, ok := mcptask.RouteName(m.Method, forward)
	if !ok || strings.TrimSpace(r.Header.Get("Mcp-Name")) == id {
		return nil
	}
	return &protocol.Refusal{ID: m.ID.Raw, Code: mcptask.CodeHeaderMismatch, Message: "Header mismatch: the Mcp-Name header must be the request's taskId"}
}

// asksProgress reports whether forwarded params carry a progressToken.
func asksProgress(params json.RawMessage) bool {
	var p struct {
		Meta map[string]json.RawMessage `json:"_meta"`
	}
	return json.Unmarshal(params, &p) == nil && p.Meta["progressToken"] != nil
}

// serveRequest hands one checked request to the SDK under a token id and
// relays the answer with the client's id.
func (h *Handler) serveRequest(w http.ResponseWriter, r *http.Request, m protocol.Message, forward json.RawMessage, stream bool) {
	token, cl := h.calls.add(h.ctx, r.Context(), sessionOf(r), m.ID)
	defer h.calls.remove(token)

	canonical, err := json.Marshal(struct {
		JSONRPC string          `json:"jsonrpc"`
		ID      string          `json:"id"`
		Method  string          `json:"method"`
		Params  json.RawMessage `json:"params,omitempty"`
	}{"2.0", token, m.Method, forward})
	if err != nil {
		panic(fmt.Sprintf("encoding a canonical request: %v", err))
	}
	fwd := r.Clone(r.Context())
	fwd.Body = io.NopCloser(bytes.NewReader(canonical))
	fwd.ContentLength = int64(len(canonical))
	fwd.Header.Del("Content-Length")
	// Nothing below sees the token: not the SDK, not its logs.
	fwd.Header.Del("Authorization")
	q := fwd.URL.Query()
	q.Del(TokenParam)
	fwd.URL.RawQuery = q.Encode()
	fwd.RequestURI = fwd.URL.RequestURI()
	fwd.Header.Set(callHeader, token)
	fwd.Header.Del(sessionHeader) // the front's own; the SDK serves statelessly

	rec := &recorder{header: http.Header{}}
	sdk := h.sdk
	if stream {
		sdk = h.sdkStream
		rec.stream = &eventRelay{w: w, id: m.ID.Raw, cancelled: func() bool { return h.calls.cancelled(cl) }}
	}
	sdk.ServeHTTP(rec, fwd)
	if rec.streaming {
		// The events went out as they came; a cancelled call's answer
		// was dropped from them.
		return
	}

	if h.calls.cancelled(cl) {
		// A cancelled request is never answered (docs/mcp-server.md#5).
		w.WriteHeader(http.StatusNoContent)
		return
	}
	if r.Context().Err() != nil {
		// The client went away (closing the request cancels the call): no
		// one reads an answer, and an aborted call is nothing to log.
		h.log.Debug("the client closed its request before the answer")
		return
	}
	if m.Method == protocol.MethodInitialize && rec.status == http.StatusOK {
		// The session id scopes the client's notifications/cancelled to
		// its own requests (docs/http.md#5).
		w.Header().Set(sessionHeader, newSessionID())
	}
	h.relay(w, rec, m.ID.Raw)
}

// relay writes the SDK's answer rec to w: a JSON-RPC answer re-encoded with
// the client's id literal (as stdio writes it: no code 0, key order), an
// error the SDK gave as text as a JSON-RPC error with the same status.
func (h *Handler) relay(w http.ResponseWriter, rec *recorder, id json.RawMessage) {
	status := rec.status
	if status == 0 {
		status = http.StatusOK
	}
	body := rec.body.Bytes()
	mt, _, _ := mime.ParseMediaType(rec.header.Get("Content-Type"))
	switch {
	case status == http.StatusAccepted || status == http.StatusNoContent:
		w.WriteHeader(status)
		return
	case mt == "application/json" && len(bytes.TrimSpace(body)) > 0:
		if out, ok := spliceResult(id, body, &h.compact); ok {
			writeHTTPBody(w, status, out)
			return
		}
		msg, err := jsonrpc.DecodeMessage(body)
		resp, ok := msg.(*jsonrpc.Response)
		if err != nil || !ok {
			h.log.Error("the SDK answered with something other than one JSON-RPC response", "status", status)
			writeHTTPError(w, http.StatusInternalServerError, &protocol.Refusal{ID: id, Code: jsonrpc.CodeInternalError, Message: protocol.MsgInternal})
			return
		}
		writeHTTPBody(w, status, protocol.EncodeResponse(id, resp))
	case status >= 400:
		text := strings.TrimSpace(string(body))
		if text == "" {
			text = http.StatusText(status)
		}
		writeHTTPError(w, status, &protocol.Refusal{ID: id, Code: jsonrpc.CodeInvalidRequest, Message: text})
	default:
		h.log.Error("the SDK answered with an unexpected body", "status", status, "contentType", mt)
		writeHTTPError(w, http.StatusInternalServerError, &protocol.Refusal{ID: id, Code: jsonrpc.CodeInternalError, Message: protocol.MsgInternal})
	}
}

// sdkResultPrefix starts every successful answer go-sdk encodes.
const sdkResultPrefix = `{"jsonrpc":"2.0","id":`

// spliceResult is protocol.EncodeResponse of the SDK's successful answer
// body, without decoding it: when body is {"jsonrpc":"2.0","id":TOKEN,
// "result":R} with TOKEN one of this handler's plain id tokens and R valid
// and compact (go-sdk encodes with encoding/json, whose output is), the
// answer is the same frame with the client's id literal. Anything else
// (an error, another shape) is not spliced: relay decodes and re-encodes
// it. A tools/list answer of 24 KB is then scanned once instead of being
// decoded, compacted and copied, and not even scanned when it is the same
// bytes as one memo already proved compact (docs/performance.md#2).
func spliceResult(id json.RawMessage, body []byte, memo *compactMemo) ([]byte, bool) {
	body = bytes.TrimRight(body, " \t\r\n")
	rest, ok := bytes.CutPrefix(body, []byte(sdkResultPrefix))
	if !ok || len(rest) == 0 || rest[len(rest)-1] != '}' {
		return nil, false
	}
	tok, result, ok := bytes.Cut(rest[:len(rest)-1], []byte(`,"result":`))
	if !ok || !plainToken(tok) || len(result) == 0 || !memo.compactJSON(result) {
		return nil, false
	}
	if len(id) == 0 {
		id = json.RawMessage("null")
	}
	out := make([]byte, 0, len(sdkResultPrefix)+len(id)+len(result)+12)
	out = append(out, sdkResultPrefix...)
	out = append(out, id...)
	out = append(out, `,"result":`...)
	out = append(out, result...)
	return append(out, '}'), true
}

// memoMinSize and memoMaxSize bound the results compactMemo keeps: below,
// a scan costs little more than the comparison; above, a result is no
// answer that repeats (a build log read back is up to 8 MiB) and keeping
// four of them would hold their memory for nothing.
const (
	memoMinSize = 4 << 10
	memoMaxSize = 256 << 10
)

// compactMemo keeps the last few large results compactJSON proved compact.
// A result that never changes (tools/list in one version's shape, about
// 20 KB) is then compared byte for byte with one it holds instead of being
// scanned again, and holds for the same reason: a comparison of memory
// costs a fraction of a JSON scan (docs/performance.md#2).
// The zero value is ready; it is safe for concurrent use.
type compactMemo struct {
	slots [4]atomic.Pointer[[]byte]
	next  atomic.Uint32
}

// compactJSON is compactJSON(v), answered from the memo when it holds v.
func (m *compactMemo) compactJSON(v []byte) bool {
	if m == nil || len(v) < memoMinSize || len(v) > memoMaxSize {
		return compactJSON(v)
	}
	for i := range m.slots {
		if p := m.slots[i].Load(); p != nil && bytes.Equal(*p, v) {
			return true
		}
	}
	if !compactJSON(v) {
		return false
	}
	kept := bytes.Clone(v)
	m.slots[m.next.Add(1)%uint32(len(m.slots))].Store(&kept)
	return true
}

// compactJSON: v is valid JSON with no white space outside its strings, so
// json.Compact would return it unchanged.
func compactJSON(v []byte) bool {
	if !json.Valid(v) {
		return false
	}
	inString, escaped := false, false
	for _, c := range v {
		switch {
		case escaped:
			escaped = false
		case inString && c == '\\':
			escaped = true
		case c == '"':
			inString = !inString
		case !inString && (c == ' ' || c == '\t' || c == '\n' || c == '\r'):
			return false
		}
	}
	return true
}

// plainToken: a JSON string of letters, digits, '-' and '_', or digits:
// the id literals this handler gives the SDK, which cannot hide a member.
func plainToken(tok []byte) bool {
	if len(tok) >= 2 && tok[0] == '"' && tok[len(tok)-1] == '"' {
		tok = tok[1 : len(tok)-1]
	}
	if len(tok) == 0 {
		return false
	}
	for _, c := range tok {
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c == '-' || c == '_') {
			return false
		}
	}
	return true
}

// removedIn20260728 are the methods the 2026-07-28 revision removed; a
// request of that version naming one is 404 with -32601.
var removedIn20260728 = map[string]bool{
	protocol.MethodInitialize: true, protocol.MethodPing: true,
	"logging/setLevel": true, "resources/subscribe": true, "resources/unsubscribe": true,
}

// readBody reads r's body, at most MaxHTTPBody bytes and within the
// limits' BodyTimeout (a client that announces a body and never sends it
// holds nothing for long); the deadline is lifted once the body is read,
// so a long call keeps its connection. A request that announces a larger
// body and waits for 100 Continue before sending it is refused unread: it
// gets 413, never 100 Continue. One that sends its body at once is read
// up to the limit, so it is still writing when the 413 comes only when
// its body exceeds the limit by more than net/http drains.
func (h *Handler) readBody(w http.ResponseWriter, r *http.Request) ([]byte, error) {
	if r.ContentLength > MaxHTTPBody && strings.EqualFold(r.Header.Get("Expect"), "100-continue") {
		return nil, &http.MaxBytesError{Limit: MaxHTTPBody}
	}
	rc := http.NewResponseController(w)
	if err := rc.SetReadDeadline(time.Now().Add(h.limits.BodyTimeout)); err != nil && !errors.Is(err, http.ErrNotSupported) {
		return nil, err
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, MaxHTTPBody))
	if err != nil {
		return nil, err // the connection closes after the answer
	}
	if err := rc.SetReadDeadline(time.Time{}); err != nil && !errors.Is(err, http.ErrNotSupported) {
		h.log.Debug("lifting the body deadline failed", "error", err)
	}
	return body, nil
}

// unsupportedVersion is the -32022 answer to a request whose protocol
// version header names a version after every one served: the versions
// served as data, as a 2026-07-28 request with an unknown version gets.
func (h *Handler) unsupportedVersion(id json.RawMessage, requested string) []byte {
	data, err := json.Marshal(struct {
		Supported []string `json:"supported"`
		Requested string   `json:"requested"`
	}{h.versions, requested})
	if err != nil {
		panic(fmt.Sprintf("encoding the versions served: %v", err))
	}
	return protocol.EncodeResponse(id, &jsonrpc.Response{Error: &jsonrpc.Error{Code: sdkmcp.CodeUnsupportedProtocolVersion, Message: msgUnsupported, Data: data}})
}

// authorized reports whether r carries the token, as a Bearer credential or
// as the token query parameter; both are compared in constant time.
func (h *Handler) authorized(r *http.Request) bool {
	ok := false
	if scheme, cred, found := strings.Cut(r.Header.Get("Authorization"), " "); found && strings.EqualFold(scheme, "Bearer") {
		ok = h.matches(strings.TrimSpace(cred))
	}
	if q, err := url.ParseQuery(r.URL.RawQuery); err == nil {
		for _, v := range q[TokenParam] {
			ok = h.matches(v) || ok
		}
	}
	return ok
}

// matches compares the hashes of both tokens, so neither their contents
// nor their lengths shape the time taken.
func (h *Handler) matches(candidate string) bool {
	sum := sha256.Sum256([]byte(candidate))
	return subtle.ConstantTimeCompare(sum[:], h.token[:]) == 1
}

// sameLoopbackOrigin reports whether Host, and Origin when present, name
// this server: a loopback name (127.0.0.1, [::1], localhost) and the port
// the request came in on.
func sameLoopbackOrigin(r *http.Request) bool {
	local, ok := r.Context().Value(http.LocalAddrContextKey).(net.Addr)
	if !ok || local == nil {
		return false
	}
	_, port, err := net.SplitHostPort(local.String())
	if err != nil || !loopbackHostPort(r.Host, port) {
		return false
	}
	origins := r.Header.Values("Origin")
	if len(origins) == 0 {
		return true
	}
	if len(origins) > 1 {
		return false
	}
	u, err := url.Parse(origins[0])
	if err != nil || u.Scheme != "http" || u.User != nil || (u.Path != "" && u.Path != "/") || u.RawQuery != "" {
		return false
	}
	return loopbackHostPort(u.Host, port)
}

// loopbackHostPort reports whether hostport is a loopback name with port.
func loopbackHostPort(hostport, port string) bool {
	host, p, err := net.SplitHostPort(hostport)
	return err == nil && p == port && IsLoopbackName(host)
}

// IsLoopbackName reports whether host (without brackets or port) is one of
// the loopback names docs/decisions.md#D14 allows: 127.0.0.1, ::1 or localhost.
func IsLoopbackName(host string) bool {
	return host == "127.0.0.1" || host == "::1" || strings.EqualFold(host, "localhost")
}

// writeHTTPError writes e as a JSON-RPC error body with status.
func writeHTTPError(w http.ResponseWriter, status int, e *protocol.Refusal) {
	writeHTTPBody(w, status, e.Encode())
}

func writeHTTPBody(w http.ResponseWriter, status int, body []byte) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Content-Length", strconv.Itoa(len(body)+1))
	w.WriteHeader(status)
	_, _ = w.Write(append(body, '\n'))
}

// recorder is the http.ResponseWriter the SDK answers into. A JSON answer
// is kept whole and relayed at the end; with stream set, an event stream
// goes to the client as it comes, through stream.
type recorder struct {
	header    http.Header
	status    int
	body      bytes.Buffer
	stream    *eventRelay
	streaming bool // the SDK answered with an event stream, relayed live
}

func (r *recorder) Header() http.Header { return r.header }

func (r *recorder) WriteHeader(status int) {
	if r.status != 0 {
		return
	}
	r.status = status
	mt, _, _ := mime.ParseMediaType(r.header.Get("Content-Type"))
	if r.stream != nil && status == http.StatusOK && mt == "text/event-stream" {
		r.streaming = true
		r.stream.start(r.header)
	}
}

func (r *recorder) Write(b []byte) (int, error) {
	if r.status == 0 {
		r.WriteHeader(http.StatusOK)
	}
	if r.streaming {
		return r.stream.write(b)
	}
	return r.body.Write(b)
}

// Flush implements http.Flusher.
func (r *recorder) Flush() {
	if r.streaming {
		r.stream.flush()
	}
}

// eventRelay passes the SDK's event stream to the client event by event:
// a JSON-RPC answer re-encoded with the client's id literal (dropped when
// the call was cancelled), everything else (notifications/progress) as it
// is.
type eventRelay struct {
	w         http.ResponseWriter
	id        json.RawMessage
	cancelled func() bool
	pending   []byte
}

func (e *eventRelay) start(h http.Header) {
	for k, v := range h {
		if k != "Content-Length" {
			e.w.Header()[k] = v
		}
	}
	e.w.WriteHeader(http.StatusOK)
}

func (e *eventRelay) write(b []byte) (int, error) {
	e.pending = append(e.pending, b...)
	for {
		i := bytes.Index(e.pending, []byte("\n\n"))
		if i < 0 {
			return len(b), nil
		}
		ev := e.pending[:i+2]
		e.pending = e.pending[i+2:]
		if out := e.rewrite(ev); out != nil {
			if _, err := e.w.Write(out); err != nil {
				return len(b), err
			}
		}
	}
}

// rewrite returns the event to send for one SDK event, or nil to drop it.
func (e *eventRelay) rewrite(ev []byte) []byte {
	var data []byte
	for _, line := range bytes.Split(bytes.TrimSuffix(ev, []byte("\n\n")), []byte("\n")) {
		if d, ok := bytes.CutPrefix(line, []byte("data: ")); ok {
			data = d
		}
	}
	if len(data) == 0 {
		return ev
	}
	msg, err := jsonrpc.DecodeMessage(data)
	resp, ok := msg.(*jsonrpc.Response)
	if err != nil || !ok {
		return ev
	}
	if e.cancelled() {
		return nil
	}
	return append(append([]byte("event: message\ndata: "), protocol.EncodeResponse(e.id, resp)...), "\n\n"...)
}

func (e *eventRelay) flush() { _ = http.NewResponseController(e.w).Flush() }

// Calls is the registry of the requests in flight through the Handlers
// that share it, by the token id the SDK sees. Its Middleware, installed as
// receiving middleware of the SDK server, ties each request's handler
// context to its HTTP request. The zero value is not usable; use NewCalls.
type Calls struct {
	log hclog.Logger

	mu    sync.Mutex
	seq   uint64
	calls map[string]*httpCall
}

// NewCalls returns an empty registry; log receives its diagnostics (nil
// means none).
func NewCalls(log hclog.Logger) *Calls {
	if log == nil {
		log = hclog.NewNullLogger()
	}
	return &Calls{log: log, calls: map[string]*httpCall{}}
}

// sessionOf is the session id r carries, when it is one the front could
// have given: 1 to 128 visible ASCII characters; "" otherwise.
func sessionOf(r *http.Request) string {
	v := r.Header.Get(sessionHeader)
	if v == "" || len(v) > 128 || strings.IndexFunc(v, func(c rune) bool { return c < 0x21 || c > 0x7e }) >= 0 {
		return ""
	}
	return v
}

// newSessionID returns a fresh session id: 128 random bits, base64url.
func newSessionID() string {
	b := make([]byte, 16)
	if _, err := rand.Read(b); err != nil {
		panic(fmt.Sprintf("reading random bytes: %v", err))
	}
	return base64.RawURLEncoding.EncodeToString(b)
}

// FromHTTP reports whether req came through a streamable HTTP handler,
// which hands every request its HTTP header.
func FromHTTP(req sdkmcp.Request) bool {
	e := req.GetExtra()
	return e != nil && e.Header != nil
}

// add registers a request in flight: its context ends with the
// HTTP request (req), with the handler (base), or with a cancellation.
func (s *Calls) add(base, req context.Context, session string, id protocol.ID) (string, *httpCall) {
	ctx, cancel := context.WithCancel(base)
	stop := context.AfterFunc(req, cancel)
	cl := &httpCall{session: session, id: id, ctx: ctx, cancel: func() { stop(); cancel() }}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.seq++
	token := "h-" + strconv.FormatUint(s.seq, 10)
	s.calls[token] = cl
	return token, cl
}

func (s *Calls) remove(token string) {
	s.mu.Lock()
	cl := s.calls[token]
	delete(s.calls, token)
	s.mu.Unlock()
	if cl != nil {
		cl.cancel()
	}
}

// cancel cancels the calls in flight with id that came in the same
// session. A notification without a session id cancels nothing: a client
// of 2026-07-28 cancels by closing its request, and without a session
// nothing tells one client's id 5 from another's, so a notification could
// otherwise stop a call of someone else (docs/http.md#5).
func (s *Calls) cancel(session string, id protocol.ID) {
	if session == "" {
		s.log.Debug("ignoring a cancellation without a session id over HTTP")
		return
	}
	var hits []*httpCall
	s.mu.Lock()
	for _, cl := range s.calls {
		if cl.session == session && cl.id.Key == id.Key && !cl.cancelled {
			cl.cancelled = true
			hits = append(hits, cl)
		}
	}
	s.mu.Unlock()
	for _, cl := range hits {
		cl.cancel()
	}
}

func (s *Calls) cancelled(cl *httpCall) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return cl.cancelled
}

// context is the context of the HTTP call req belongs to, if any.
func (s *Calls) context(req sdkmcp.Request) context.Context {
	if !FromHTTP(req) {
		return nil
	}
	token := req.GetExtra().Header.Get(callHeader)
	s.mu.Lock()
	defer s.mu.Unlock()
	if cl := s.calls[token]; cl != nil {
		return cl.ctx
	}
	return nil
}

// Middleware ties every request that came over HTTP to its call:
// the handler's context ends when the call's does.
func (s *Calls) Middleware(next sdkmcp.MethodHandler) sdkmcp.MethodHandler {
	return func(ctx context.Context, method string, req sdkmcp.Request) (sdkmcp.Result, error) {
		callCtx := s.context(req)
		if callCtx == nil {
			return next(ctx, method, req)
		}
		ctx, cancel := context.WithCancel(ctx)
		defer cancel()
		stop := context.AfterFunc(callCtx, cancel)
		defer stop()
		return next(ctx, method, req)
	}
}
