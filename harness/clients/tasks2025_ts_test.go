//go:build unix

package clients

import (
	"context"
	"fmt"
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

// TestTSTasks2025 runs ts/tasks2025.test.mjs, the TypeScript SDK's own task
// client (SEP-1686, the 2025-11-25 form) against the real `buildguard mcp`
// over stdio and streamable HTTP, the fake agent, and a project of shell
// builds: the safe build's result read through its task, a failed build a
// failed task, a cancelled build stopped (its processes gone, BUILD failed
// at the agent), the session's tasks listed (docs/decisions.md#D17).
func TestTSTasks2025(t *testing.T) {
	t.Parallel()
	if _, err := exec.LookPath("node"); err != nil {
		t.Fatalf("node not on PATH: install Node 20 (apt-get install -y nodejs npm), then (cd harness/clients/ts && %s)", strings.Join(NpmCI, " "))
	}
	ictx, icancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer icancel()
	var log strings.Builder
	if err := EnsureNodeModules(ictx, "ts", &log); err != nil {
		t.Fatalf("%v\n%s", err, log.String())
	}
	bin := testbin.Build(t, t.TempDir())
	for _, transport := range []string{"stdio", "http"} {
		t.Run(transport, func(t *testing.T) {
			t.Parallel()
			ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
			defer cancel()
			project := filepath.Join(t.TempDir(), "project with spaces")
			if err := os.MkdirAll(project, 0o755); err != nil {
				t.Fatal(err)
			}
			hang := `sleep 300 & echo "$$ $!" > pids.tmp; mv pids.tmp pids; echo compiling forever; wait`
			cfg := fmt.Sprintf(`{"builds":{
				"ok":{"command":["sh","-c","echo compiling Service; echo BUILD SUCCESSFUL"]},
				"fail":{"command":["sh","-c","echo 'Service.java:3: error: cannot find symbol' >&2; exit 1"]},
				"hang":{"command":["sh","-c",%q]}},"defaultBuild":"ok"}`, hang)
			if err := os.WriteFile(filepath.Join(project, ".buildguard.json"), []byte(cfg), 0o644); err != nil {
				t.Fatal(err)
			}
			agent := fakeagent.NewServer(t, fakeagent.WithHeartbeat(-1))
			cmd := exec.CommandContext(ctx, "node", "--test", "tasks2025.test.mjs")
			cmd.Dir = "ts"
			cmd.Env = append(os.Environ(), "BUILDGUARD_BIN="+bin, "AGENT_PORT_FILE="+agent.PortFile(), "PROJECT_DIR="+project, "CLIENT_TRANSPORT="+transport)
			cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
			cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
			cmd.WaitDelay = 10 * time.Second
			out, err := cmd.CombinedOutput()
			if err != nil {
				t.Fatalf("node --test tasks2025.test.mjs: %v\n%s", err, out)
			}
			if !strings.Contains(string(out), "# pass 1") || !strings.Contains(string(out), "# fail 0") {
				t.Fatalf("node --test ran no passing test:\n%s", out)
			}
			wctx, wcancel := context.WithTimeout(ctx, 10*time.Second)
			defer wcancel()
			if _, err := agent.WaitCommand(wctx, "BUILD failed request="); err != nil {
				t.Errorf("the cancelled build's BUILD failed never reached the agent: %v", err)
			}
			wait.Gone(t, 10*time.Second, wait.PIDFile(t, time.Second, filepath.Join(project, "pids"))...)
		})
	}
}
