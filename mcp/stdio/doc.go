// Package stdio is the MCP server's strict stdio transport: [Transport]
// reads one JSON object per line from stdin and writes one compact
// JSON-RPC answer per line to the saved stdout (docs/mcp-server.md#2,
// docs/mcp-server.md#5, docs/decisions.md#D4). It answers framing, parse,
// envelope, id, params and method errors itself (the SDK never sees a
// malformed message), swaps request ids for opaque tokens so the raw id
// literal is echoed back exactly, and schedules requests: one at a time,
// except one verification batch with valid arguments in the background and
// the safe builds beside the reader; it turns notifications/cancelled into
// SDK cancellation and suppresses the cancelled answer, and drains
// in-flight work before reporting EOF.
//
// It is stdio only: the HTTP front (mcp/httpfront) has neither lines, nor a
// batch slot, nor EOF. It knows no tool by name; the server (package mcp)
// names the batch and build tools.
package stdio
