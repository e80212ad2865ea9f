// Package mcp assembles buildguard's MCP server (`buildguard mcp`): a go-sdk
// server (imported as sdkmcp) with the reclazz_* tools registered, the
// per-session protocol version policy, and the receiving middleware that
// shapes every answer; and it serves that server over stdio
// ([Server.ServeStdio]) or streamable HTTP ([Server.ServeStreamableHTTP]).
// [Serve] runs one server's whole life for a front, from its tool service
// to its builds' end, and returns how it ended ([Ending]) for the front to
// word.
//
// The server is four layers, each a package a reader can take on its own:
//
//   - mcp/protocol: the checks every message goes through before the SDK
//     sees it, on both transports (envelope, id, params, the canonical
//     request the SDK gets), and the encoding of answers with the client's
//     id literal. It imports nothing of ours.
//   - mcp/stdio: the strict newline-delimited stdio transport and its
//     scheduler (one request at a time, one verification batch and the
//     safe builds beside the reader, cancellation, the drain at EOF).
//     Stdio only.
//   - mcp/httpfront: the streamable HTTP front (loopback, token, Origin/Host
//     and body checks; go-sdk's stateless handler behind them; cancellation
//     by closing the request). HTTP only.
//   - service/tools: the tool service: the one list of tools, one file per tool
//     with its definition, handler and command-line form, which both this
//     server and the CLI (cli/) read.
//
// This package holds what ties them together. The SDK owns sessions, tool
// registration, middleware dispatch and request cancellation. Where its
// defaults break the contract of docs/mcp-server.md#2 and
// docs/mcp-server.md#5, as docs/decisions.md#D4 and docs/decisions.md#D5
// require, the fixes go through the SDK's extension points only:
//
//   - A stdio session is connected in an already-initialized 2024-11-05
//     state, so the SDK serves ping, tools/list and tools/call before
//     initialize (in the legacy shape, docs/decisions.md#D5) instead of
//     refusing them. The transports forward only the params fields they
//     checked, so no ignored field (clientInfo, cursor, an incomplete _meta)
//     can fail the SDK's decoding or switch a request's protocol. A request
//     whose _meta carries a 2026-07-28 protocol version and the client's
//     capabilities keeps its _meta: the SDK serves it sessionless, and
//     server/discover is answered (docs/decisions.md#D14).
//   - Receiving middleware answers initialize with the docs/decisions.md#D5
//     version policy (and refuses a second successful one with -32600),
//     recovers panics as -32603, renders tools/list in the session's shape
//     (fixed order, outputSchema and annotations only where the version has
//     them; no ttlMs/cacheScope cache hints, which belong to 2026-07-28) and
//     renders tools/call results (isError always present, structuredContent
//     only from 2025-06-18 on, argument errors as isError results only in
//     2025-11-25 sessions). A 2026-07-28 request is answered in the
//     2025-11-25 shape plus resultType and, for tools/list and the
//     resources methods, the cache hints, which renderResources takes out
//     of the resources results of earlier sessions.
//
// The server runs tools through a [Caller] (*tools.Service in production, a
// fake in protocol tests) that validates the arguments and runs the agent
// exchange. It writes nothing but JSON-RPC to its output.
package mcp
