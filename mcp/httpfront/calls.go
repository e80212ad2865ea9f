package httpfront

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"sync"

	"github.com/hashicorp/go-hclog"
	sdkmcp "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/buildguard/buildguard/mcp/protocol"
)

const (
	// callHeader carries a request's registry token from the front to the
	// middleware; a client's own header of that name is removed first.
	callHeader = "Buildguard-Call"
	// sessionHeader carries the session id the front gives a client at
	// initialize, which scopes its notifications/cancelled.
	sessionHeader = "Mcp-Session-Id"
)

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

// httpCall is one request in flight through a Handler.
type httpCall struct {
	session   string // the client's session id; "" for none
	id        protocol.ID
	ctx       context.Context
	cancel    context.CancelFunc
	cancelled bool // by notifications/cancelled; guarded by Calls.mu
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

// Session is the session id (Mcp-Session-Id, the one the front gave at
// initialize) of the HTTP call req belongs to; "" for a request without one
// or not over HTTP.
func (s *Calls) Session(req sdkmcp.Request) string {
	if !FromHTTP(req) {
		return ""
	}
	token := req.GetExtra().Header.Get(callHeader)
	s.mu.Lock()
	defer s.mu.Unlock()
	if cl := s.calls[token]; cl != nil {
		return cl.session
	}
	return ""
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
