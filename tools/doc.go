// Package tools implements the nine reclazz_* operations — status, doctor,
// scan, pending, diagnose, reload_control, build, verify and verify_batch —
// over agentproto: argument validation (docs/mcp-server.md#4.0 and each tool's own
// checks), endpoint selection with the explicit-project gate, the agent
// exchange, and the result object with its isError rule and legacy text.
//
// The MCP server (package mcp) and the CLI subcommands (package cli) both call
// Service.Call, so an MCP answer and a CLI answer over the same agent state are
// the same JSON. This package knows nothing of JSON-RPC, schemas or sessions.
package tools
