package stdio_test

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/buildguard/buildguard/harness/mcptest"
	"github.com/buildguard/buildguard/mcp"
)

// The tests of this file's package drive the stdio transport as the server
// (package mcp) assembles it, on the pipes of mcptest.Session.

const (
	initLine  = `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18"}}`
	batchCall = `{"jsonrpc":"2.0","id":%s,"method":"tools/call","params":{"name":"reclazz_verify_batch","arguments":{}}}`
	pingLine  = `{"jsonrpc":"2.0","id":%s,"method":"ping"}`
)

// sha is the SHA-256 the verification calls ask for.
const sha = "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"

// startSession serves caller over pipes until the test ends.
func startSession(t *testing.T, caller mcp.Caller, drain time.Duration) *mcptest.Session {
	t.Helper()
	s := mcptest.NewSession(t)
	srv := mcp.NewServer(mcp.Config{Caller: caller, Version: "test", Logger: mcptest.TestLogger(s.Logs), DrainTimeout: drain})
	s.Serve(srv.ServeStdio)
	return s
}

// field decodes one member of a response line.
func field(t *testing.T, line, name string) string {
	t.Helper()
	var m map[string]json.RawMessage
	if err := json.Unmarshal([]byte(line), &m); err != nil {
		t.Fatalf("response %q: %v", line, err)
	}
	return string(m[name])
}
