// Package mcptest holds the test helpers the MCP server's packages share: a
// deterministic tool caller for protocol tests (FakeCaller), a project
// whose safe builds run shell scripts against a fake agent (BuildProject),
// a server driven over stdio pipes (Session), a POST as a streamable HTTP
// client sends it (Post), the check that an output is nothing but JSON-RPC
// responses (AssertOnlyJSONRPC), the runner of the stdio transcripts
// (RunTranscripts) and the server's test logger. It imports no package of
// the server, so the server's own tests use it too. The tests of mcp,
// mcp/httpfront, mcp/stdio and service/mcptask import it; product code
// never does.
package mcptest
