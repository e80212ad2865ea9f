// Package protocol is what both MCP transports (mcp/stdio, mcp/httpfront)
// check and write the same way, so a malformed message gets the same
// JSON-RPC error over either (docs/mcp-server.md#2.1,
// docs/mcp-server.md#2.2, docs/http.md#3): the envelope, the request id
// (compared by value, echoed as the client wrote it), the params of each
// served method, turned into the canonical request the SDK gets
// ([Message.Forward]); the target of notifications/cancelled; the
// encoding of answers and errors (never code 0); and the names of the
// methods, the protocol versions and the error texts.
//
// It does not serve anything, hold state, or know the tools; it imports
// nothing of ours.
package protocol
