package protocol

// The JSON-RPC error texts both transports answer themselves, and the
// server's for a broken invariant.
const (
	MsgParseError     = "Parse error"
	MsgInvalidRequest = "Invalid Request"
	MsgParamsObject   = "params must be an object"
	MsgInitVersion    = "initialize requires a nonblank string protocolVersion"
	MsgNameString     = "name must be a string"
	MsgArgsObject     = "arguments must be an object"
	MsgInternal       = "Internal error"
	MsgParamsTooDeep  = "params must not nest deeper than 64 levels"
)

// MaxParamsDepth bounds how deeply a request's params nest (params itself
// is level 1): deeper params are -32602 on both transports, before any
// decoder of the SDK could fail on them (docs/mcp-server.md#2.2).
const MaxParamsDepth = 64

// The methods the server serves. Everything else is -32601.
const (
	MethodInitialize = "initialize"
	MethodPing       = "ping"
	MethodToolsList  = "tools/list"
	MethodToolsCall  = "tools/call"
	MethodCancelled  = "notifications/cancelled"
	MethodProgress   = "notifications/progress"
	// MethodDiscover is the 2026-07-28 capability probe (docs/decisions.md#D14).
	MethodDiscover = "server/discover"
	// The build logs a failed safe build links to (docs/safe-build.md#12).
	MethodResourcesRead          = "resources/read"
	MethodResourcesList          = "resources/list"
	MethodResourcesTemplatesList = "resources/templates/list"
)

// MsgURIString is the error of a resources/read whose uri is not a string.
const MsgURIString = "Invalid params: uri must be a string"

// The protocol versions served through initialize (docs/decisions.md#D5),
// oldest first, and the sessionless version served per request
// (docs/decisions.md#D14).
const (
	Version20241105 = "2024-11-05"
	Version20250326 = "2025-03-26"
	Version20250618 = "2025-06-18"
	Version20251125 = "2025-11-25"
	// Version20260728 is never negotiated through initialize: a request
	// carries it in params._meta (with the client's capabilities) and is
	// served on its own, without a session, after server/discover.
	Version20260728 = "2026-07-28"
)
