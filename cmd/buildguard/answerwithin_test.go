//go:build unix

package main

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/buildguard/buildguard/internal/testsupport/testbin"
	"github.com/buildguard/buildguard/internal/testsupport/wait"
)

// TestMCPStopEndsDetachedBuilds: a safe build whose call answered running
// (`mcp --answer-within`, docs/safe-build.md#14) belongs to no request, yet
// stopping the server ends it as it ends every build: at stdin EOF (exit
// 0) and on SIGTERM (exit 143), the build's processes are gone and BUILD
// failed reached the agent.
func TestMCPStopEndsDetachedBuilds(t *testing.T) {
	t.Parallel()
	bin := testbin.Build(t, t.TempDir())
	for _, stop := range []string{"eof", "sigterm"} {
		t.Run(stop, func(t *testing.T) {
			t.Parallel()
			h := startHangingServer(t, bin, "--answer-within", "1s")
			answers := bufio.NewReader(h.out)
			fmt.Fprintln(h.in, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18"}}`)
			fmt.Fprintln(h.in, `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"reclazz_safe_build","arguments":{}}}`)
			lines := make(chan string, 2)
			go func() {
				for range 2 {
					l, _ := answers.ReadString('\n')
					lines <- l
				}
				io.Copy(io.Discard, answers)
			}()
			for range 2 {
				select {
				case l := <-lines:
					if strings.Contains(l, `"id":2`) && !strings.Contains(l, `"outcome":"running"`) {
						t.Fatalf("the call did not answer running: %s", l)
					}
				case <-time.After(30 * time.Second):
					t.Fatal("no answer within 30 s")
				}
			}
			pids := wait.PIDFile(t, 20*time.Second, filepath.Join(h.dir, "pids"))
			if h.agent.Received("BUILD failed request=") {
				t.Fatalf("the build ended with its call: %q", h.agent.Commands())
			}
			want := 0
			if stop == "eof" {
				h.in.Close()
			} else {
				want = 128 + int(syscall.SIGTERM)
				if err := h.cmd.Process.Signal(syscall.SIGTERM); err != nil {
					t.Fatal(err)
				}
			}
			exited := make(chan error, 1)
			go func() { exited <- h.cmd.Wait() }()
			var err error
			select {
			case err = <-exited:
			case <-time.After(40 * time.Second):
				t.Fatal("buildguard mcp did not exit within 40 s")
			}
			code := 0
			var ee *exec.ExitError
			if errors.As(err, &ee) {
				code = ee.ExitCode()
			} else if err != nil {
				t.Fatal(err)
			}
			if code != want {
				t.Errorf("exit %d, want %d; stderr:\n%s", code, want, h.stderr)
			}
			wait.Gone(t, 10*time.Second, pids...)
			if !h.agent.Received("BUILD failed request=") {
				t.Errorf("the agent got %q, want BUILD failed", h.agent.Commands())
			}
			h.in.Close()
		})
	}
}
