package httpfront

import (
	"errors"
	"io"
	"net"
	"net/http"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"

	"github.com/buildguard/buildguard/mcp/protocol"
)

const (
	// MaxHTTPBody is the largest request body accepted; a larger one is 413.
	MaxHTTPBody = 1 << 20
	// maxForwardedBody bounds the canonical request the SDK gets for a body
	// the front accepted: encoding/json writes <, >, & as six bytes and
	// U+2028, U+2029 (three bytes) as six, so a body of MaxHTTPBody can
	// grow up to six times when its params are encoded again. The front
	// has applied the client's limit already; the SDK's must not refuse
	// what it let through.
	maxForwardedBody = 6*MaxHTTPBody + 64<<10
)

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
