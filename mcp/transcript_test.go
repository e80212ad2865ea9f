package mcp

import (
	"flag"
	"io"
	"testing"
	"time"

	"github.com/buildguard/buildguard/harness/mcptest"
)

var update = flag.Bool("update", false, "rewrite the expected output of the testdata/*.txtar transcripts")

// TestTranscripts feeds the "in" file of each testdata/*.txtar to a server
// (fake caller) as stdin, closes it, and compares stdout with the "out" file
// byte for byte. The log (warn level) must stay empty unless a "logs" file
// lists lines it must contain. Requests other than a verification
// batch are answered in input order, so the transcripts are deterministic.
func TestTranscripts(t *testing.T) {
	mcptest.RunTranscripts(t, "testdata/*.txtar", *update, func(logs io.Writer) mcptest.ServeFunc {
		srv := NewServer(Config{Caller: &mcptest.FakeCaller{}, Version: "test", Logger: mcptest.TestLogger(logs), DrainTimeout: 5 * time.Second})
		return srv.ServeStdio
	})
}
