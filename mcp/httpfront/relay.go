package httpfront

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"mime"
	"net/http"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"

	"github.com/buildguard/buildguard/mcp/protocol"
)

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
