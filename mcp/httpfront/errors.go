package httpfront

import (
	"net/http"
	"strconv"

	"github.com/buildguard/buildguard/mcp/protocol"
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

// writeHTTPError writes e as a JSON-RPC error body with status.
func writeHTTPError(w http.ResponseWriter, status int, e *protocol.Refusal) {
	writeHTTPBody(w, status, e.Encode())
}

// writeHTTPBody writes body, a JSON text, with status and a final newline.
func writeHTTPBody(w http.ResponseWriter, status int, body []byte) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Content-Length", strconv.Itoa(len(body)+1))
	w.WriteHeader(status)
	_, _ = w.Write(append(body, '\n'))
}
