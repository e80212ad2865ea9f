// Package mcptest holds the test helpers the MCP server's packages share:
// a deterministic tool caller for protocol tests (FakeCaller) and a project
// whose safe builds run shell scripts against a fake agent (BuildProject).
// The tests of mcp, mcp/httpfront, mcp/stdio and service/mcptask import it;
// product code never does.
package mcptest
