package protocol

import (
	"bytes"
	"encoding/json"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"

	"github.com/buildguard/buildguard/service/mcptask"
)

// The checks every message goes through before the SDK sees it, over stdio
// (docs/mcp-server.md#2.1, docs/mcp-server.md#2.2) and over HTTP (docs/http.md#3) alike, so both
// answer a malformed message with the same JSON-RPC error.

// Refusal is a JSON-RPC error the server answers itself, before the SDK
// sees the message.
type Refusal struct {
	// ID is the id literal to answer with; nil means "id":null.
	ID      json.RawMessage
	Code    int64
	Message string
}

// Encode renders the refusal as one compact JSON-RPC error response.
func (e *Refusal) Encode() []byte { return EncodeError(e.ID, e.Code, e.Message) }

// Message is one JSON-RPC message with a valid envelope.
type Message struct {
	ID        ID
	HasID     bool // a request (with id), not a notification
	Method    string
	Params    json.RawMessage
	HasParams bool
}

// Parse checks one frame (trimmed of JSON whitespace, not empty):
// strict JSON, an object (no batch arrays), jsonrpc "2.0", a string method
// and, when present, a valid id (docs/mcp-server.md#2.1, docs/mcp-server.md#2.2 steps 1–3). The error echoes the
// id when the id itself is valid.
func Parse(frame []byte) (Message, *Refusal) {
	if !json.Valid(frame) {
		return Message{}, &Refusal{Code: jsonrpc.CodeParseError, Message: MsgParseError}
	}
	if frame[0] != '{' { // scalars, null and (unsupported) batch arrays
		return Message{}, &Refusal{Code: jsonrpc.CodeInvalidRequest, Message: MsgInvalidRequest}
	}
	var env map[string]json.RawMessage
	if err := json.Unmarshal(frame, &env); err != nil {
		return Message{}, &Refusal{Code: jsonrpc.CodeParseError, Message: MsgParseError}
	}
	idRaw, hasID := env["id"]
	id, idOK := ParseID(idRaw)
	var answerID json.RawMessage
	if idOK {
		answerID = id.Raw
	}
	method, methodOK := JSONString(env["method"])
	version, _ := JSONString(env["jsonrpc"])
	if version != "2.0" || !methodOK || (hasID && !idOK) {
		return Message{}, &Refusal{ID: answerID, Code: jsonrpc.CodeInvalidRequest, Message: MsgInvalidRequest}
	}
	params, hasParams := env["params"]
	return Message{ID: id, HasID: hasID, Method: method, Params: params, HasParams: hasParams}, nil
}

// Forward checks the params of a request (docs/mcp-server.md#2.2 steps 4–6) and returns
// the canonical request the SDK gets: params built from the checked fields
// only. The contract ignores everything else (clientInfo, capabilities,
// cursor, _meta), so nothing else may make the SDK's decoding fail, and no
// _meta other than a 2026-07-28 request's can switch a request's protocol.
// For tools/call, tool is the tool's name and args its arguments (nil when
// absent).
func (m Message) Forward() (params json.RawMessage, tool string, args json.RawMessage, rerr *Refusal) {
	fail := func(code int64, msg string) (json.RawMessage, string, json.RawMessage, *Refusal) {
		return nil, "", nil, &Refusal{ID: m.ID.Raw, Code: code, Message: msg}
	}
	if m.HasParams && !IsObject(m.Params) {
		return fail(jsonrpc.CodeInvalidParams, MsgParamsObject)
	}
	if Depth(m.Params) > MaxParamsDepth {
		return fail(jsonrpc.CodeInvalidParams, MsgParamsTooDeep)
	}
	var fields map[string]json.RawMessage
	if m.HasParams {
		if err := json.Unmarshal(m.Params, &fields); err != nil {
			return fail(jsonrpc.CodeInvalidParams, MsgParamsObject)
		}
	}
	sessionless := SessionlessMeta(fields["_meta"])
	withMeta := func(p map[string]json.RawMessage) json.RawMessage {
		if sessionless {
			p["_meta"] = fields["_meta"]
		}
		if len(p) == 0 {
			return nil
		}
		return MustMarshal(p)
	}
	switch m.Method {
	case MethodInitialize:
		v, ok := JSONString(fields["protocolVersion"])
		if !ok || strings.TrimSpace(v) == "" {
			return fail(jsonrpc.CodeInvalidParams, MsgInitVersion)
		}
		return MustMarshal(map[string]json.RawMessage{"protocolVersion": fields["protocolVersion"]}), "", nil, nil
	case MethodDiscover:
		if !sessionless {
			return fail(jsonrpc.CodeMethodNotFound, msgDiscoverNotFound)
		}
		return withMeta(map[string]json.RawMessage{}), "", nil, nil
	case MethodPing:
		if sessionless {
			return fail(jsonrpc.CodeMethodNotFound, msgPingRemoved)
		}
		return nil, "", nil, nil
	case MethodToolsList:
		return withMeta(map[string]json.RawMessage{}), "", nil, nil
	case MethodToolsCall:
		return m.forwardToolCall(fields, withMeta)
	case MethodResourcesRead:
		if _, ok := JSONString(fields["uri"]); !ok {
			return fail(jsonrpc.CodeInvalidParams, MsgURIString)
		}
		return withMeta(map[string]json.RawMessage{"uri": fields["uri"]}), "", nil, nil
	case MethodResourcesList, MethodResourcesTemplatesList:
		return withMeta(map[string]json.RawMessage{}), "", nil, nil
	case mcptask.MethodGet, mcptask.MethodCancel, mcptask.MethodUpdate, mcptask.MethodResult, mcptask.MethodList:
		return m.forwardTasks(fields, sessionless, withMeta)
	default:
		return fail(jsonrpc.CodeMethodNotFound, "Method not found: "+m.Method)
	}
}

// forwardTasks is Forward for the tasks methods.
func (m Message) forwardTasks(fields map[string]json.RawMessage, sessionless bool, withMeta func(map[string]json.RawMessage) json.RawMessage) (json.RawMessage, string, json.RawMessage, *Refusal) {
	fail := func(code int64, msg string) (json.RawMessage, string, json.RawMessage, *Refusal) {
		return nil, "", nil, &Refusal{ID: m.ID.Raw, Code: code, Message: msg}
	}
	p := map[string]json.RawMessage{}
	if m.Method == mcptask.MethodResult || m.Method == mcptask.MethodList {
		// The 2025-11-25 form of tasks (docs/decisions.md#D17), which
		// SEP-2663 removed: the server serves them to a 2025-11-25 session
		// and answers -32601 to any other, as it answers a 2026-07-28
		// request here. The fields go as they came; the server checks them.
		if sessionless {
			return fail(jsonrpc.CodeMethodNotFound, "Method not found: "+m.Method)
		}
		for _, f := range []string{"taskId", "cursor"} {
			if v, ok := fields[f]; ok {
				p[f] = v
			}
		}
		return withMeta(p), "", nil, nil
	}
	// The tasks extension (docs/decisions.md#D17): its own middleware
	// refuses a request that did not declare it (-32021), so the _meta of a
	// 2026-07-28 request is all it needs beside these fields, which must
	// have types go-sdk can decode.
	if msg := mcptask.ParamsProblem(m.Method, fields); msg != "" {
		return fail(jsonrpc.CodeInvalidParams, msg)
	}
	for _, f := range []string{"taskId", "inputResponses"} {
		if v, ok := fields[f]; ok && (f == "taskId" || m.Method == mcptask.MethodUpdate) {
			p[f] = v
		}
	}
	return withMeta(p), "", nil, nil
}

// forwardToolCall is Forward for tools/call: the tool's name, its arguments
// (an object, when present), of the session's _meta the progress token, and
// the task param.
func (m Message) forwardToolCall(fields map[string]json.RawMessage, withMeta func(map[string]json.RawMessage) json.RawMessage) (json.RawMessage, string, json.RawMessage, *Refusal) {
	fail := func(msg string) (json.RawMessage, string, json.RawMessage, *Refusal) {
		return nil, "", nil, &Refusal{ID: m.ID.Raw, Code: jsonrpc.CodeInvalidParams, Message: msg}
	}
	name, ok := JSONString(fields["name"])
	if !ok {
		return fail(MsgNameString)
	}
	p := map[string]json.RawMessage{"name": fields["name"]}
	if args, ok := fields["arguments"]; ok {
		if !IsObject(args) {
			return fail(MsgArgsObject)
		}
		p["arguments"] = args
	}
	// A progress token is all of _meta a session request keeps: the
	// tool reports progress under it (docs/safe-build.md#5).
	meta := map[string]json.RawMessage{}
	if tok, ok := progressToken(fields["_meta"]); ok {
		meta["progressToken"] = tok
	}
	// The task param of a 2025-11-25 session's call (SEP-1686) rides in
	// _meta, the only place go-sdk keeps; the server checks it.
	if task, ok := fields["task"]; ok {
		meta[mcptask.MetaKeyTaskParam] = task
	}
	if len(meta) > 0 {
		p["_meta"] = MustMarshal(meta)
	}
	return withMeta(p), name, p["arguments"], nil
}

// CancelTarget returns the request a notifications/cancelled names, when the
// notification is well formed (docs/mcp-server.md#5: params an object, requestId a valid id,
// reason absent or a string).
func (m Message) CancelTarget() (id ID, reason string, ok bool) {
	if m.Method != MethodCancelled || !IsObject(m.Params) {
		return ID{}, "", false
	}
	var p struct {
		RequestID json.RawMessage `json:"requestId"`
		Reason    json.RawMessage `json:"reason"`
	}
	if err := json.Unmarshal(m.Params, &p); err != nil {
		return ID{}, "", false
	}
	if id, ok = ParseID(p.RequestID); !ok {
		return ID{}, "", false
	}
	if p.Reason != nil {
		if reason, ok = JSONString(p.Reason); !ok {
			return ID{}, "", false
		}
	}
	return id, reason, true
}

// progressToken returns the progressToken of a tools/call _meta when it is
// a string or an integer, as MCP defines it.
func progressToken(meta json.RawMessage) (json.RawMessage, bool) {
	if !IsObject(meta) {
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
	if _, isString := JSONString(tok); isString {
		return tok, true
	}
	// A number literal (null, true and the like are no token) whose value
	// is an integer.
	var n int64
	if len(tok) > 0 && (tok[0] == '-' || tok[0] >= '0' && tok[0] <= '9') && json.Unmarshal(tok, &n) == nil && !bytes.ContainsAny(tok, ".eE") {
		return tok, true
	}
	return nil, false
}

// Depth is how deeply the JSON text v nests objects and arrays: 0 for a
// scalar, 1 for {} or [], and so on. v must be valid JSON.
func Depth(v []byte) int {
	depth, deepest, inString, escaped := 0, 0, false, false
	for _, c := range v {
		switch {
		case inString:
			switch {
			case escaped:
				escaped = false
			case c == '\\':
				escaped = true
			case c == '"':
				inString = false
			}
		case c == '"':
			inString = true
		case c == '{' || c == '[':
			depth++
			deepest = max(deepest, depth)
		case c == '}' || c == ']':
			depth--
		}
	}
	return deepest
}
