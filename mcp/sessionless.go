package mcp

import (
	"context"
	"reflect"

	sdkmcp "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/buildguard/buildguard/mcp/httpfront"
	"github.com/buildguard/buildguard/mcp/protocol"
)

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
		if v, ok := p.GetMeta()[sdkmcp.MetaKeyProtocolVersion].(string); ok && v >= protocol.Version20260728 {
			return protocol.Version20260728
		}
	}
	ss := serverSession(req)
	if !httpfront.FromHTTP(req) {
		return s.sessionVersion(ss)
	}
	if ss == nil || ss.InitializeParams() == nil {
		return ""
	}
	return negotiate(ss.InitializeParams().ProtocolVersion)
}

// withVersion and ctxVersion carry the version of a tools/call to runTool.
func withVersion(ctx context.Context, v string) context.Context {
	return context.WithValue(ctx, versionKey{}, v)
}

func ctxVersion(ctx context.Context) string {
	v, _ := ctx.Value(versionKey{}).(string)
	return v
}
