package httpfront

import (
	"bytes"
	"encoding/json"
	"mime"
	"net/http"
	"strings"

	sdkmcp "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/buildguard/buildguard/mcp/protocol"
	"github.com/buildguard/buildguard/service/mcptask"
)

// directTaskGet is the answer to a 2026-07-28 tasks/get of a task the store
// holds, given without go-sdk's session per request (docs/http.md#4.1): a
// host polls a long build every few seconds for minutes, and most of a
// poll's cost was that session, not the answer. It answers only what the
// SDK would answer the same way, byte for byte: a request the SDK checks
// would refuse, or a taskId the store does not hold, is not answered here
// (ok false) and goes to the SDK, which gives the refusal. The front has
// already checked the envelope, the 2026-07-28 _meta keys and the Mcp-Name
// header.
func (h *Handler) directTaskGet(r *http.Request, m protocol.Message, forward json.RawMessage) (answer []byte, ok bool) {
	if h.tasks == nil || m.Method != mcptask.MethodGet || !m.HasID || !sdkWouldServe(r, m.Method) {
		return nil, false
	}
	var params map[string]json.RawMessage
	if json.Unmarshal(forward, &params) != nil {
		return nil, false
	}
	id, isString := protocol.JSONString(params["taskId"])
	if !isString || id == "" || !declaresTasks(params["_meta"], r.Header.Get(versionHeader)) {
		return nil, false
	}
	res, err := h.tasks.Answer(id)
	if err != nil {
		return nil, false
	}
	// What go-sdk adds to the result of every 2026-07-28 request (SEP-2575).
	res.Meta = sdkmcp.Meta{sdkmcp.MetaKeyServerInfo: h.info}
	result, err := encodeLikeSDK(res)
	if err != nil {
		return nil, false
	}
	var b bytes.Buffer
	b.Grow(len(sdkResultPrefix) + len(m.ID.Raw) + len(result) + 12)
	b.WriteString(sdkResultPrefix)
	b.Write(m.ID.Raw)
	b.WriteString(`,"result":`)
	b.Write(result)
	b.WriteByte('}')
	return b.Bytes(), true
}

// sdkWouldServe reports whether go-sdk's stateless handler passes r's
// headers for a request of method: a Content-Type of JSON, an Accept that
// names both application/json and text/event-stream, the Mcp-Method
// header of the 2026-07-28 transport equal to the method, and no
// Last-Event-ID. An Accept that
// gets there through a wildcard is left to the SDK as well.
func sdkWouldServe(r *http.Request, method string) bool {
	if mt, _, err := mime.ParseMediaType(r.Header.Get("Content-Type")); err != nil || mt != "application/json" {
		return false
	}
	if r.Header.Get("Mcp-Method") != method {
		return false
	}
	if len(r.Header.Values("Last-Event-ID")) > 0 {
		// go-sdk refuses a POST that names one (400).
		return false
	}
	var jsonOK, streamOK bool
	for _, v := range r.Header.Values("Accept") {
		for tok := range strings.SplitSeq(v, ",") {
			base, _, _ := strings.Cut(tok, ";")
			switch strings.ToLower(strings.TrimSpace(base)) {
			case "application/json":
				jsonOK = true
			case "text/event-stream":
				streamOK = true
			}
		}
	}
	return jsonOK && streamOK
}

// declaresTasks reports whether a 2026-07-28 _meta declares the tasks
// extension in the shape go-sdk accepts: the protocol version a string
// equal to the MCP-Protocol-Version header, the client capabilities (and
// the client info, when present) decoding into the SDK's types.
func declaresTasks(raw json.RawMessage, headerVersion string) bool {
	var meta map[string]any
	if json.Unmarshal(raw, &meta) != nil {
		return false
	}
	if v, _ := meta[sdkmcp.MetaKeyProtocolVersion].(string); v != headerVersion || v < protocol.Version20260728 {
		return false
	}
	// go-sdk decodes them into a type of its own whose roots field is a
	// pointer to the same shape; a value decodes into one if it decodes
	// into the other.
	if !remarshal(meta[sdkmcp.MetaKeyClientCapabilities], new(sdkmcp.ClientCapabilities)) {
		return false
	}
	if info, present := meta[sdkmcp.MetaKeyClientInfo]; present && !remarshal(info, new(sdkmcp.Implementation)) {
		return false
	}
	return mcptask.Declared(meta)
}

// remarshal decodes the decoded JSON value v into into, and reports
// whether it could.
func remarshal(v, into any) bool {
	if v == nil {
		return false
	}
	b, err := json.Marshal(v)
	return err == nil && json.Unmarshal(b, into) == nil
}

// encodeLikeSDK is v encoded as go-sdk encodes a result: encoding/json,
// compact, without escaping <, > and &.
func encodeLikeSDK(v any) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimRight(b.Bytes(), "\n"), nil
}
