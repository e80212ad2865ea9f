package httpfront

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
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
	// ShutdownTimeout bounds the stop after SIGINT/SIGTERM: in-flight calls
	// are cancelled first, then the server waits this long for their answers.
	ShutdownTimeout = 4 * time.Second
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
