package mcp

import (
	"testing"
	"time"

	"github.com/buildguard/buildguard/harness/mcptest"
)

// startSession serves caller over pipes until the test ends.
func startSession(t *testing.T, caller Caller, drain time.Duration) *mcptest.Session {
	t.Helper()
	s := mcptest.NewSession(t)
	srv := NewServer(Config{Caller: caller, Version: "test", Logger: mcptest.TestLogger(s.Logs), DrainTimeout: drain})
	s.Serve(srv.ServeStdio)
	return s
}
