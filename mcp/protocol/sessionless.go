package protocol

import (
	"encoding/json"

	sdkmcp "github.com/modelcontextprotocol/go-sdk/mcp"
)

// msgDiscoverNotFound answers a server/discover that is not a 2026-07-28
// request (a client of an older version probing): the versions of
// docs/decisions.md#D5 have no such method (docs/decisions.md#D14).
const msgDiscoverNotFound = "Method not found: " + MethodDiscover

// msgPingRemoved answers a 2026-07-28 ping: that version has no ping.
const msgPingRemoved = "Method not found: " + MethodPing

// SessionlessMeta reports whether raw, a request's params._meta, makes the
// request a 2026-07-28 sessionless one (docs/decisions.md#D14): an object whose
// protocol version is a string from 2026-07-28 on and whose client
// capabilities are an object. Such a _meta is forwarded to the SDK as it is,
// which serves the request on its own (and refuses a version it does not
// know with -32022 and the versions it does). Any other _meta is, in every
// version of docs/decisions.md#D5, a field the contract ignores
// (docs/decisions.md#D14), so it can neither fail nor switch a request.
func SessionlessMeta(raw json.RawMessage) bool {
	if !IsObject(raw) {
		return false
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(raw, &m); err != nil {
		return false
	}
	v, ok := JSONString(m[sdkmcp.MetaKeyProtocolVersion])
	return ok && v >= Version20260728 && IsObject(m[sdkmcp.MetaKeyClientCapabilities])
}

// MissingMetaKeys names the keys a 2026-07-28 request's params._meta lacks
// of the two every such request carries: the protocol version (a string)
// and the client's capabilities (an object). params is the request's raw
// params (nil when absent).
func MissingMetaKeys(params json.RawMessage) []string {
	var p struct {
		Meta map[string]json.RawMessage `json:"_meta"`
	}
	if IsObject(params) {
		_ = json.Unmarshal(params, &p)
	}
	var missing []string
	if _, ok := JSONString(p.Meta[sdkmcp.MetaKeyProtocolVersion]); !ok {
		missing = append(missing, sdkmcp.MetaKeyProtocolVersion)
	}
	if !IsObject(p.Meta[sdkmcp.MetaKeyClientCapabilities]) {
		missing = append(missing, sdkmcp.MetaKeyClientCapabilities)
	}
	return missing
}
