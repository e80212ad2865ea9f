//go:build unix

package main

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/buildguard/buildguard/harness/fakeagent"
	"github.com/buildguard/buildguard/internal/testsupport/testbin"
	"github.com/buildguard/buildguard/internal/testsupport/wait"
)

// TestMCPSignalStopsTheRunningBuild: a stop signal to `buildguard mcp`,
// over stdio or HTTP, while a safe build runs stops the build's process
// group and has BUILD failed acknowledged before the server exits
// (docs/safe-build.md#6): over stdio with 128+signal, over HTTP with 0
// (SIGHUP included), and SIGQUIT with 131 on both and no runtime dump
// (docs/decisions.md#D12).
func TestMCPSignalStopsTheRunningBuild(t *testing.T) {
	t.Parallel()
	bin := testbin.Build(t, t.TempDir())
	for _, tc := range []struct {
		http bool
		sig  syscall.Signal
		want int
	}{
		{false, syscall.SIGTERM, 143},
		{false, syscall.SIGQUIT, 131},
		{true, syscall.SIGHUP, 0},
		{true, syscall.SIGTERM, 0},
		{true, syscall.SIGQUIT, 131},
	} {
		name := "stdio"
		if tc.http {
			name = "http"
		}
		t.Run(name+"/"+tc.sig.String(), func(t *testing.T) {
			t.Parallel()
			testMCPSignal(t, bin, tc.http, tc.sig, tc.want)
		})
	}
}

// hangingServer starts `buildguard mcp` (with args after "mcp") in a new
// project whose only build never ends on its own: it writes "PID
// GRANDCHILD" to pids, prints a line and waits. The server is killed when
// the test ends; in and out are its stdin and stdout.
type hangingServer struct {
	agent  *fakeagent.Server
	dir    string
	cmd    *exec.Cmd
	in     io.WriteCloser
	out    io.Reader
	stderr *strings.Builder
}

func startHangingServer(t *testing.T, bin string, args ...string) *hangingServer {
	t.Helper()
	h := &hangingServer{agent: fakeagent.NewServer(t, fakeagent.WithHeartbeat(-1)), dir: t.TempDir(), stderr: &strings.Builder{}}
	script := `sleep 300 & echo "$$ $!" > pids.tmp; mv pids.tmp pids; echo compiling; wait`
	if err := os.WriteFile(filepath.Join(h.dir, ".buildguard.json"), []byte(fmt.Sprintf(`{"builds":{"hang":{"command":["sh","-c",%q]}}}`, script)), 0o644); err != nil {
		t.Fatal(err)
	}
	h.cmd = exec.Command(bin, append([]string{"mcp", "--port-file", h.agent.PortFile()}, args...)...)
	h.cmd.Dir = h.dir
	h.cmd.Stderr = h.stderr
	var err error
	if h.in, err = h.cmd.StdinPipe(); err != nil {
		t.Fatal(err)
	}
	if h.out, err = h.cmd.StdoutPipe(); err != nil {
		t.Fatal(err)
	}
	if err := h.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = h.cmd.Process.Kill() })
	return h
}

func testMCPSignal(t *testing.T, bin string, overHTTP bool, sig syscall.Signal, want int) {
	var args []string
	if overHTTP {
		args = []string{"--http", "127.0.0.1:0", "--url-file", "url"}
	}
	h := startHangingServer(t, bin, args...)
	agent, dir, cmd, in, out, stderr := h.agent, h.dir, h.cmd, h.in, h.out, h.stderr
	go io.Copy(io.Discard, bufio.NewReader(out))
	call := `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"reclazz_safe_build","arguments":{}}}`
	if overHTTP {
		var u string
		wait.For(t, 20*time.Second, "the URL file", func() bool {
			b, err := os.ReadFile(filepath.Join(dir, "url"))
			u = strings.TrimSpace(string(b))
			return err == nil && strings.HasSuffix(string(b), "\n")
		})
		go func() {
			req, _ := http.NewRequest(http.MethodPost, u, strings.NewReader(call))
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("Accept", "application/json, text/event-stream")
			req.Header.Set("MCP-Protocol-Version", "2025-06-18")
			if resp, err := (&http.Client{Timeout: 60 * time.Second}).Do(req); err == nil {
				resp.Body.Close()
			}
		}()
	} else {
		fmt.Fprintln(in, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18"}}`)
		fmt.Fprintln(in, call)
	}
	pids := wait.PIDFile(t, 20*time.Second, filepath.Join(dir, "pids"))
	if err := cmd.Process.Signal(sig); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	var err error
	select {
	case err = <-exited:
	case <-time.After(30 * time.Second):
		t.Fatalf("buildguard mcp did not exit within 30 s of %v", sig)
	}
	code := 0
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	if code != want {
		t.Errorf("exit %d, want %d; stderr:\n%s", code, want, stderr.String())
	}
	if strings.Contains(stderr.String(), "goroutine ") {
		t.Errorf("the Go runtime dumped its goroutines:\n%s", stderr.String())
	}
	wait.Gone(t, 10*time.Second, pids...)
	if !agent.Received("BUILD failed request=") {
		t.Errorf("the agent got %q, want BUILD failed", agent.Commands())
	}
	if overHTTP {
		if _, err := os.Lstat(filepath.Join(dir, "url")); !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("the URL file outlived the server: %v", err)
		}
	}
	in.Close()
}

// TestMCPStopEndsTaskBuilds: a safe build running as an MCP task
// (docs/safe-build.md#13) is not a request in flight, yet stopping the
// server ends it as a cancellation does: at stdin EOF (exit 0) and on
// SIGTERM (exit 143), the build's processes are gone and BUILD failed
// reached the agent (docs/decisions.md#D17).
func TestMCPStopEndsTaskBuilds(t *testing.T) {
	t.Parallel()
	bin := testbin.Build(t, t.TempDir())
	for _, stop := range []string{"eof", "sigterm"} {
		t.Run(stop, func(t *testing.T) {
			t.Parallel()
			h := startHangingServer(t, bin)
			agent, dir, cmd, in, out := h.agent, h.dir, h.cmd, h.in, h.out
			answers := bufio.NewReader(out)
			fmt.Fprintln(in, `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"reclazz_safe_build","arguments":{},"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{"extensions":{"io.modelcontextprotocol/tasks":{}}}}}}`)
			line := make(chan string, 1)
			go func() { l, _ := answers.ReadString('\n'); line <- l; io.Copy(io.Discard, answers) }()
			select {
			case l := <-line:
				if !strings.Contains(l, `"resultType":"task"`) {
					t.Fatalf("the call was not answered with a task: %s", l)
				}
			case <-time.After(20 * time.Second):
				t.Fatal("no CreateTaskResult within 20 s")
			}
			pids := wait.PIDFile(t, 20*time.Second, filepath.Join(dir, "pids"))
			want := 0
			if stop == "eof" {
				in.Close()
			} else {
				want = 128 + int(syscall.SIGTERM)
				if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
					t.Fatal(err)
				}
			}
			exited := make(chan error, 1)
			go func() { exited <- cmd.Wait() }()
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
				t.Errorf("exit %d, want %d", code, want)
			}
			wait.Gone(t, 10*time.Second, pids...)
			if !agent.Received("BUILD failed request=") {
				t.Errorf("the agent got %q, want BUILD failed", agent.Commands())
			}
			in.Close()
		})
	}
}
