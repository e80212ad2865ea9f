//go:build unix

package stdio_test

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/buildguard/buildguard/harness/mcptest"
	"github.com/buildguard/buildguard/internal/testsupport/wait"
)

// TestSafeBuildOnStdio drives the stdio transport line by line: the build
// call runs beside the reader (a ping is answered while it runs, its own id
// is refused as active), progress lines are notifications with the
// request's token, and EOF — the client gone — cancels the build, whose
// group is gone and whose BUILD failed the agent got before Serve returns.
func TestSafeBuildOnStdio(t *testing.T) {
	t.Parallel()
	p := mcptest.NewBuildProject(t, map[string]string{"ok": mcptest.HangBuild})
	s := startSession(t, p.Svc, time.Second)
	s.Send(initLine)
	s.Recv()
	s.Send(`{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"reclazz_safe_build","arguments":{},"_meta":{"progressToken":42}}}`)
	pids := wait.PIDFile(t, 10*time.Second, filepath.Join(p.Dir, "pids"))
	if got := s.Recv(); got != `{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":42,"message":"compiling forever","progress":1}}` {
		t.Errorf("progress line %s", got)
	}
	s.Send(fmt.Sprintf(pingLine, "8"))
	if got := s.Recv(); got != `{"jsonrpc":"2.0","id":8,"result":{}}` {
		t.Fatalf("ping during a build: %s", got)
	}
	s.Send(`{"jsonrpc":"2.0","id":7,"method":"ping"}`)
	if got := s.Recv(); !strings.Contains(got, `"id":7,"error":{"code":-32600,"message":"Request ID is already active"}`) {
		t.Fatalf("the running build's id reused: %s", got)
	}
	if rest := s.CloseAndRest(); len(rest) != 0 {
		t.Errorf("answered after EOF: %q", rest)
	}
	if !p.Agent.Received("BUILD failed request=") {
		t.Errorf("BUILD failed not sent before the server stopped: %q", p.Agent.Commands())
	}
	wait.Gone(t, 10*time.Second, pids...)
}
