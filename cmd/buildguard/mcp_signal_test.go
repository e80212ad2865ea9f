//go:build unix

package main

import (
	"bufio"
	"errors"
	"fmt"
	"io"
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

// TestMCPSignalStopsTheRunningBuild: SIGTERM to `buildguard mcp` while a
// safe build runs stops the build's process group and has BUILD failed
// acknowledged before the server exits 143 (docs/safe-build.md#6).
func TestMCPSignalStopsTheRunningBuild(t *testing.T) {
	t.Parallel()
	bin := testbin.Build(t, t.TempDir())
	agent := fakeagent.NewServer(t, fakeagent.WithHeartbeat(-1))
	dir := t.TempDir()
	script := `sleep 300 & echo "$$ $!" > pids.tmp; mv pids.tmp pids; echo compiling; wait`
	if err := os.WriteFile(filepath.Join(dir, ".buildguard.json"), []byte(fmt.Sprintf(`{"builds":{"hang":{"command":["sh","-c",%q]}}}`, script)), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, "mcp", "--port-file", agent.PortFile())
	cmd.Dir = dir
	in, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()
	go io.Copy(io.Discard, bufio.NewReader(out))
	fmt.Fprintln(in, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18"}}`)
	fmt.Fprintln(in, `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"reclazz_safe_build","arguments":{}}}`)
	pids := wait.PIDFile(t, 20*time.Second, filepath.Join(dir, "pids"))
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	select {
	case err = <-exited:
	case <-time.After(30 * time.Second):
		t.Fatal("buildguard mcp did not exit within 30 s of SIGTERM")
	}
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 128+int(syscall.SIGTERM) {
		t.Errorf("exit %v, want 143", err)
	}
	wait.Gone(t, 10*time.Second, pids...)
	if !agent.Received("BUILD failed request=") {
		t.Errorf("the agent got %q, want BUILD failed", agent.Commands())
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
			agent := fakeagent.NewServer(t, fakeagent.WithHeartbeat(-1))
			dir := t.TempDir()
			script := `sleep 300 & echo "$$ $!" > pids.tmp; mv pids.tmp pids; echo compiling; wait`
			if err := os.WriteFile(filepath.Join(dir, ".buildguard.json"), []byte(fmt.Sprintf(`{"builds":{"hang":{"command":["sh","-c",%q]}}}`, script)), 0o644); err != nil {
				t.Fatal(err)
			}
			cmd := exec.Command(bin, "mcp", "--port-file", agent.PortFile())
			cmd.Dir = dir
			in, err := cmd.StdinPipe()
			if err != nil {
				t.Fatal(err)
			}
			out, err := cmd.StdoutPipe()
			if err != nil {
				t.Fatal(err)
			}
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			defer cmd.Process.Kill()
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
