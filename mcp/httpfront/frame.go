package httpfront

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdkmcp "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/buildguard/buildguard/mcp/protocol"
	"github.com/buildguard/buildguard/service/mcptask"
)

// versionHeader is the protocol version a request states.
const versionHeader = "MCP-Protocol-Version"

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

// removedIn20260728 are the methods the 2026-07-28 revision removed; a
// request of that version naming one is 404 with -32601.
var removedIn20260728 = map[string]bool{
	protocol.MethodInitialize: true, protocol.MethodPing: true,
	"logging/setLevel": true, "resources/subscribe": true, "resources/unsubscribe": true,
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
