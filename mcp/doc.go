// Package mcp is buildguard's MCP server (`buildguard mcp`) and its ten
// reclazz_* tools: the per-session protocol version policy and a strict
// newline-delimited stdio transport around
// github.com/modelcontextprotocol/go-sdk (imported as sdkmcp), and the tools
// themselves over agentproto.
//
// Each tool lives in one file, tool_<name>.go, whose constructor returns the
// whole [Tool]: name, description, input and output schema, annotations,
// default timeout, argument checks, handler and command-line form. [Tools]
// lists them in tools/list order; the server advertises that list and the
// CLI (package cli) builds its subcommands from it. [Service] runs a call
// with the instance's [Deps]: the common argument checks (toolargs.go,
// docs/mcp-server.md#4.0), endpoint selection with the explicit-project gate
// (endpoint.go), the agent session of the correlated tools (agentsession.go)
// and the result object with its isError rule and legacy text (result.go).
//
// The SDK owns sessions, tool registration, middleware dispatch and request
// cancellation. Where its stdio defaults break the contract of
// docs/mcp-server.md#2 and docs/mcp-server.md#5, as docs/decisions.md#D4 and
// docs/decisions.md#D5 require, this package fixes them
// through the SDK's extension points only:
//
//   - [Transport] is an sdkmcp.Transport that reads one JSON object per line
//     and answers framing, parse, envelope, id, params and method errors itself
//     (the SDK never sees a malformed message), swaps request ids for opaque
//     tokens so the raw id literal is echoed back exactly, runs one
//     verification batch with valid arguments in the background while other
//     requests are served one at a time, turns notifications/cancelled into
//     SDK cancellation and suppresses the cancelled answer, drains in-flight
//     work before reporting EOF, and writes every answer as one compact line
//     under one lock.
//   - The session is connected in an already-initialized 2024-11-05 state, so
//     the SDK serves ping, tools/list and tools/call before initialize (in the
//     legacy shape, docs/decisions.md#D5) instead of refusing them. The transport forwards only
//     the params fields it checked, so no ignored field (clientInfo, cursor,
//     an incomplete _meta) can fail the SDK's decoding or switch a request's
//     protocol. A request whose _meta carries a 2026-07-28 protocol version
//     and the client's capabilities keeps its _meta: the SDK serves it
//     sessionless, and server/discover is answered (docs/decisions.md#D14).
//   - Receiving middleware answers initialize with the docs/decisions.md#D5 version policy
//     (and refuses a second successful one with -32600),
//     recovers panics as -32603, renders tools/list in the session's shape
//     (fixed order, outputSchema and annotations only where the version has
//     them; no ttlMs/cacheScope cache hints, which belong to 2026-07-28) and
//     renders tools/call results (isError always present, structuredContent
//     only from 2025-06-18 on, argument errors as isError results only in
//     2025-11-25 sessions). A 2026-07-28 request is answered in the 2025-11-25
//     shape plus resultType and, for tools/list, the cache hints.
//   - [Server.HTTPHandler] serves the same server over streamable HTTP (go-sdk's
//     handler, stateless), behind loopback, token, Origin/Host and body-size
//     checks of its own (docs/decisions.md#D14, docs/http.md).
//
// The server runs tools through a [Caller] ([*Service] in production, a fake
// in protocol tests) that validates the arguments and runs the agent
// exchange. It writes nothing but JSON-RPC responses to its output.
package mcp
