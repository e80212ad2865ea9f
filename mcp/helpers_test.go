package mcp

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/buildguard/buildguard/harness/mcptest"
)

// initLine initializes a stdio session at 2025-06-18.
const initLine = `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18"}}`

// serveAll runs a whole session over in and returns stdout.
func serveAll(t *testing.T, in string) string {
	t.Helper()
	var out, logs bytes.Buffer
	srv := NewServer(Config{Caller: &mcptest.FakeCaller{}, Logger: mcptest.TestLogger(&logs)})
	if err := srv.ServeStdio(context.Background(), strings.NewReader(in), &out); err != nil {
		t.Fatalf("Serve: %v", err)
	}
	if logs.Len() > 0 {
		t.Errorf("unexpected log output:\n%s", logs.String())
	}
	mcptest.AssertOnlyJSONRPC(t, out.Bytes())
	return out.String()
}
