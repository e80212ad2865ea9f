//go:build unix

package clients

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/buildguard/buildguard/harness/fakeagent"
	"github.com/buildguard/buildguard/internal/testsupport/testbin"
	"github.com/buildguard/buildguard/internal/testsupport/wait"
)

// TestTasksClient drives the real `buildguard mcp` with the independent
// tasks client (written from SEP-2663, none of the server's task code), over
// stdio and streamable HTTP, against the fake agent: a safe build becomes a
// task and completes with the tool's result, its output lines as status
// messages; a build longer than the client's per-request timeout still
// completes; a build cancelled mid-run ends (processes gone, BUILD failed
// at the agent); other tools stay synchronous.
func TestTasksClient(t *testing.T) {
	t.Parallel()
	bin := testbin.Build(t, t.TempDir())
	for _, transport := range []string{"stdio", "http"} {
		t.Run(transport, func(t *testing.T) {
			t.Parallel()
			ctx, cancel := context.WithTimeout(context.Background(), 120*time.Second)
			defer cancel()
			project := t.TempDir()
			// The quick build runs until the client has seen its line as a
			// status message (at most 20 s), so no poll interval can miss it.
			quick := `echo compiling Service; i=0; while [ ! -f seen ] && [ $i -lt 200 ]; do sleep 0.1; i=$((i+1)); done; echo BUILD SUCCESSFUL`
			hang := `sleep 300 & echo "$$ $!" > pids.tmp; mv pids.tmp pids; echo compiling forever; wait`
			cfg := fmt.Sprintf(`{"builds":{
				"quick":{"command":["sh","-c",%q]},
				"long":{"command":["sh","-c","echo compiling slowly; sleep 5; echo BUILD SUCCESSFUL"]},
				"hang":{"command":["sh","-c",%q]}},"defaultBuild":"quick"}`, quick, hang)
			if err := os.WriteFile(filepath.Join(project, ".buildguard.json"), []byte(cfg), 0o644); err != nil {
				t.Fatal(err)
			}
			agent := fakeagent.NewServer(t, fakeagent.WithHeartbeat(-1))
			server := ServerCommand{Binary: bin, Args: []string{"mcp", "--port-file", agent.PortFile()}, Dir: project}
			dial := DialTasksStdio
			if transport == "http" {
				dial = DialTasksHTTP
			}
			c, err := dial(ctx, "tasks-"+transport, server)
			if err != nil {
				t.Fatal(err)
			}
			defer func() {
				if err := c.Close(); err != nil {
					t.Errorf("closing: %v", err)
				}
				if se := c.ServerStderr(); se != "" {
					t.Errorf("the server wrote to stderr: %q", se)
				}
			}()
			if c.ServerName() != "buildguard" {
				t.Errorf("server/discover names %q", c.ServerName())
			}

			var msgs []string
			res, err := c.CallProgress(ctx, "reclazz_safe_build", map[string]any{"build": "quick"}, func(_ float64, m string) {
				msgs = append(msgs, m)
				if strings.Contains(m, "compiling Service") {
					_ = os.WriteFile(filepath.Join(project, "seen"), nil, 0o644)
				}
			})
			if err != nil || res.RPCCode != 0 {
				t.Fatalf("quick build: %+v %v", res, err)
			}
			var d map[string]any
			if json.Unmarshal(res.Structured, &d) != nil || d["outcome"] != "ok" || res.IsError {
				t.Fatalf("quick build result: %s", res.Structured)
			}
			if c.Tasks() != 1 {
				t.Errorf("%d calls answered with a task, want 1", c.Tasks())
			}
			if !strings.Contains(strings.Join(msgs, "\n"), "compiling Service") {
				t.Errorf("status messages %q lack the build's output line", msgs)
			}

			// Longer than any single request may take.
			c.RequestTimeout = 3 * time.Second
			res, err = c.Call(ctx, "reclazz_safe_build", map[string]any{"build": "long"})
			c.RequestTimeout = 0
			if err != nil || !strings.Contains(string(res.Structured), `"outcome":"ok"`) {
				t.Fatalf("a build outlasting the request timeout: %+v %v", res, err)
			}

			cctx, stop := context.WithCancel(ctx)
			done := make(chan error, 1)
			go func() {
				_, err := c.Call(cctx, "reclazz_safe_build", map[string]any{"build": "hang"})
				done <- err
			}()
			pids := wait.PIDFile(t, 20*time.Second, filepath.Join(project, "pids"))
			stop()
			select {
			case err := <-done:
				if !errors.Is(err, context.Canceled) {
					t.Errorf("cancelled build returned %v", err)
				}
			case <-time.After(60 * time.Second):
				t.Fatal("the cancelled task did not end within 60 s")
			}
			wait.Gone(t, 10*time.Second, pids...)
			if !agent.Received("BUILD failed request=") {
				t.Errorf("the agent got %q, want BUILD failed", agent.Commands())
			}

			res, err = c.Call(ctx, "reclazz_status", nil)
			if err != nil || res.Structured == nil || c.Tasks() != 3 {
				t.Errorf("reclazz_status: %+v %v (tasks %d, want still 3)", res, err, c.Tasks())
			}
		})
	}
}
