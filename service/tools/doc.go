// Package tools is buildguard's tool service: the ten reclazz_* tools over
// agentproto, which the MCP server (package mcp) advertises and calls and
// the CLI (cli/) turns into subcommands (docs/decisions.md#D2).
//
// Each tool lives in one file, tool_<name>.go, whose constructor returns the
// whole [Tool]: name, description, input and output schema, annotations,
// default timeout, argument checks, handler and command-line form. [All]
// lists them in tools/list order; it is the one list both fronts read.
// [Service] runs a call with the instance's [Deps]: the common argument
// checks (toolargs.go, docs/mcp-server.md#4.0), endpoint selection with the
// explicit-project gate (endpoint.go), the agent session of the correlated
// tools (agentsession.go), the agent data passed through (passthrough.go)
// and the result object with its isError rule and legacy text (result.go).
//
// It knows no transport and no protocol version: the server shapes results
// per version, the CLI prints them.
package tools
