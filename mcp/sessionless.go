package mcp

import (
	"context"
	"encoding/json"
	"reflect"

	sdkmcp "github.com/modelcontextprotocol/go-sdk/mcp"
)

// methodDiscover is the 2026-07-28 capability probe (docs/decisions.md#D14).
const methodDiscover = "server/discover"

// msgDiscoverNotFound answers a server/discover that is not a 2026-07-28
// request (a client of an older version probing), as before docs/decisions.md#D14.
const msgDiscoverNotFound = "Method not found: " + methodDiscover

// msgPingRemoved answers a 2026-07-28 ping: that version has no ping.
const msgPingRemoved = "Method not found: " + methodPing

// sessionlessMeta reports whether raw, a request's params._meta, makes the
// request a 2026-07-28 sessionless one (docs/decisions.md#D14): an object whose
// protocol version is a string from 2026-07-28 on and whose client
// capabilities are an object. Such a _meta is forwarded to the SDK as it is,
// which serves the request on its own (and refuses a version it does not
// know with -32022 and the versions it does). Any other _meta is a field the
// contract ignores, as before docs/decisions.md#D14, so it can neither fail nor switch a
// request.
func sessionlessMeta(raw json.RawMessage) bool {
	if !isObject(raw) {
		return false
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(raw, &m); err != nil {
		return false
	}
	v, ok := jsonString(m[sdkmcp.MetaKeyProtocolVersion])
	return ok && v >= Version20260728 && isObject(m[sdkmcp.MetaKeyClientCapabilities])
}

// versionKey carries a tools/call's protocol version from the middleware to
// the tool handler.
type versionKey struct{}

// requestVersion is the protocol version whose shape req is answered in: a
// 2026-07-28 request's own version; in a stdio session the version its
// initialize negotiated ("" before it); over HTTP, where every request has a
// session of its own, the version of the MCP-Protocol-Version header, which
// the SDK put in the session's state (2025-03-26 without the header, as the
// transport specification says).
func (s *Server) requestVersion(req sdkmcp.Request) string {
	if p := req.GetParams(); p != nil && !reflect.ValueOf(p).IsNil() {
		if v, ok := p.GetMeta()[sdkmcp.MetaKeyProtocolVersion].(string); ok && v >= Version20260728 {
			return Version20260728
		}
	}
	ss := serverSession(req)
	if !overHTTP(req) {
		return s.sessionVersion(ss)
	}
	if ss == nil || ss.InitializeParams() == nil {
		return ""
	}
	return negotiate(ss.InitializeParams().ProtocolVersion)
}

// overHTTP reports whether req came through the streamable HTTP handler,
// which hands every request its HTTP header.
func overHTTP(req sdkmcp.Request) bool {
	e := req.GetExtra()
	return e != nil && e.Header != nil
}

// withVersion and ctxVersion carry the version of a tools/call to runTool.
func withVersion(ctx context.Context, v string) context.Context {
	return context.WithValue(ctx, versionKey{}, v)
}

func ctxVersion(ctx context.Context) string {
	v, _ := ctx.Value(versionKey{}).(string)
	return v
}
