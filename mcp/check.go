package mcp

import (
	"bytes"
	"encoding/json"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
)

// The checks every message goes through before the SDK sees it, over stdio
// (docs/mcp-server.md#2.1, docs/mcp-server.md#2.2) and over HTTP (docs/http.md#3) alike, so both
// answer a malformed message with the same JSON-RPC error.

// rpcError is a JSON-RPC error the server answers itself; id nil means
// "id":null.
type rpcError struct {
	id      json.RawMessage
	code    int64
	message string
}

func (e *rpcError) encode() []byte { return encodeError(e.id, e.code, e.message) }

// message is one JSON-RPC message with a valid envelope.
type message struct {
	id        requestID
	hasID     bool
	method    string
	params    json.RawMessage
	hasParams bool
}

// parseMessage checks one frame (trimmed of JSON whitespace, not empty):
// strict JSON, an object (no batch arrays), jsonrpc "2.0", a string method
// and, when present, a valid id (docs/mcp-server.md#2.1, docs/mcp-server.md#2.2 steps 1–3). The error echoes the
// id when the id itself is valid.
func parseMessage(frame []byte) (message, *rpcError) {
	if !json.Valid(frame) {
		return message{}, &rpcError{code: jsonrpc.CodeParseError, message: msgParseError}
	}
	if frame[0] != '{' { // scalars, null and (unsupported) batch arrays
		return message{}, &rpcError{code: jsonrpc.CodeInvalidRequest, message: msgInvalidRequest}
	}
	var env map[string]json.RawMessage
	if err := json.Unmarshal(frame, &env); err != nil {
		return message{}, &rpcError{code: jsonrpc.CodeParseError, message: msgParseError}
	}
	idRaw, hasID := env["id"]
	id, idOK := parseID(idRaw)
	var answerID json.RawMessage
	if idOK {
		answerID = id.raw
	}
	method, methodOK := jsonString(env["method"])
	version, _ := jsonString(env["jsonrpc"])
	if version != "2.0" || !methodOK || (hasID && !idOK) {
		return message{}, &rpcError{id: answerID, code: jsonrpc.CodeInvalidRequest, message: msgInvalidRequest}
	}
	params, hasParams := env["params"]
	return message{id: id, hasID: hasID, method: method, params: params, hasParams: hasParams}, nil
}

// forwardRequest checks the params of a request (docs/mcp-server.md#2.2 steps 4–6) and returns
// the canonical request the SDK gets: params built from the checked fields
// only. The contract ignores everything else (clientInfo, capabilities,
// cursor, _meta), so nothing else may make the SDK's decoding fail, and no
// _meta other than a 2026-07-28 request's can switch a request's protocol.
// For tools/call, tool is the tool's name and args its arguments (nil when
// absent).
func (m message) forwardRequest() (params json.RawMessage, tool string, args json.RawMessage, rerr *rpcError) {
	fail := func(code int64, msg string) (json.RawMessage, string, json.RawMessage, *rpcError) {
		return nil, "", nil, &rpcError{id: m.id.raw, code: code, message: msg}
	}
	if m.hasParams && !isObject(m.params) {
		return fail(jsonrpc.CodeInvalidParams, msgParamsObject)
	}
	var fields map[string]json.RawMessage
	if m.hasParams {
		if err := json.Unmarshal(m.params, &fields); err != nil {
			return fail(jsonrpc.CodeInvalidParams, msgParamsObject)
		}
	}
	sessionless := sessionlessMeta(fields["_meta"])
	withMeta := func(p map[string]json.RawMessage) json.RawMessage {
		if sessionless {
			p["_meta"] = fields["_meta"]
		}
		if len(p) == 0 {
			return nil
		}
		return mustMarshal(p)
	}
	switch m.method {
	case methodInitialize:
		v, ok := jsonString(fields["protocolVersion"])
		if !ok || strings.TrimSpace(v) == "" {
			return fail(jsonrpc.CodeInvalidParams, msgInitVersion)
		}
		return mustMarshal(map[string]json.RawMessage{"protocolVersion": fields["protocolVersion"]}), "", nil, nil
	case methodDiscover:
		if !sessionless {
			return fail(jsonrpc.CodeMethodNotFound, msgDiscoverNotFound)
		}
		return withMeta(map[string]json.RawMessage{}), "", nil, nil
	case methodPing:
		if sessionless {
			return fail(jsonrpc.CodeMethodNotFound, msgPingRemoved)
		}
		return nil, "", nil, nil
	case methodToolsList:
		return withMeta(map[string]json.RawMessage{}), "", nil, nil
	case methodToolsCall:
		name, ok := jsonString(fields["name"])
		if !ok {
			return fail(jsonrpc.CodeInvalidParams, msgNameString)
		}
		p := map[string]json.RawMessage{"name": fields["name"]}
		if args, ok := fields["arguments"]; ok {
			if !isObject(args) {
				return fail(jsonrpc.CodeInvalidParams, msgArgsObject)
			}
			p["arguments"] = args
		}
		// A progress token is all of _meta a session request keeps: the
		// tool reports progress under it (docs/safe-build.md#5).
		if tok, ok := progressToken(fields["_meta"]); ok {
			p["_meta"] = mustMarshal(map[string]json.RawMessage{"progressToken": tok})
		}
		return withMeta(p), name, p["arguments"], nil
	default:
		return fail(jsonrpc.CodeMethodNotFound, "Method not found: "+m.method)
	}
}

// cancelTarget returns the request a notifications/cancelled names, when the
// notification is well formed (docs/mcp-server.md#5: params an object, requestId a valid id,
// reason absent or a string).
func (m message) cancelTarget() (id requestID, reason string, ok bool) {
	if m.method != methodCancelled || !isObject(m.params) {
		return requestID{}, "", false
	}
	var p struct {
		RequestID json.RawMessage `json:"requestId"`
		Reason    json.RawMessage `json:"reason"`
	}
	if err := json.Unmarshal(m.params, &p); err != nil {
		return requestID{}, "", false
	}
	if id, ok = parseID(p.RequestID); !ok {
		return requestID{}, "", false
	}
	if p.Reason != nil {
		if reason, ok = jsonString(p.Reason); !ok {
			return requestID{}, "", false
		}
	}
	return id, reason, true
}

// progressToken returns the progressToken of a tools/call _meta when it is
// a string or an integer, as MCP defines it.
func progressToken(meta json.RawMessage) (json.RawMessage, bool) {
	if !isObject(meta) {
		return nil, false
	}
	var m map[string]json.RawMessage
	if json.Unmarshal(meta, &m) != nil {
		return nil, false
	}
	tok, ok := m["progressToken"]
	if !ok {
		return nil, false
	}
	if _, isString := jsonString(tok); isString {
		return tok, true
	}
	var n int64
	if json.Unmarshal(tok, &n) == nil && !bytes.ContainsAny(tok, ".eE") {
		return tok, true
	}
	return nil, false
}
