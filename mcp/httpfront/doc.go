// Package httpfront is the MCP server's streamable HTTP front
// (docs/decisions.md#D14, docs/http.md): [Handler] serves go-sdk's
// stateless StreamableHTTPHandler behind checks of its own (path,
// Origin/Host on loopback, token, POST, body size, then the message checks
// of mcp/protocol), relays each answer with the client's id literal, and
// [Serve] runs it on a listener with bounded reads and a bounded shutdown.
// [Calls] ties each request's handler context to its HTTP request.
//
// It is HTTP only; the stdio transport is mcp/stdio. It knows nothing of
// the tools or of the version policy (package mcp).
package httpfront
