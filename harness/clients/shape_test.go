//go:build unix

package clients

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/buildguard/buildguard/harness/fakeagent"
	"github.com/buildguard/buildguard/internal/testsupport/testbin"
)

// shapeServer starts the fake agent and returns the `buildguard mcp` command
// aimed at its port file from an unrelated directory with spaces.
func shapeServer(t *testing.T, bin string) (ServerCommand, *fakeagent.Server) {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "launch dir with spaces")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	agent := fakeagent.NewServer(t, fakeagent.WithPortFile(filepath.Join(t.TempDir(), "agent port", "agent.port")), fakeagent.WithHeartbeat(-1))
	return ServerCommand{Binary: bin, Args: []string{"mcp", "--port-file", agent.PortFile()}, Dir: dir}, agent
}

// TestGoSDKToolShapes runs the Go SDK lane's tool-shape checks against the
// real `buildguard mcp` subprocess and the fake agent, once per protocol
// version: ten tools; outputSchema and annotations exactly from 2025-06-18
// on; every result (errors included) equal to its text and valid against its
// schema, with a required-field deletion rejected; argument errors as -32602
// or, from 2025-11-25 on, as tool errors.
func TestGoSDKToolShapes(t *testing.T) {
	t.Parallel()
	bin := testbin.Build(t, t.TempDir())
	for _, l := range GoSDKLanes {
		v := l.Version
		t.Run(l.Name(), func(t *testing.T) {
			t.Parallel()
			ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
			defer cancel()
			server, agent := shapeServer(t, bin)
			c, err := GoSDKDial(l)(ctx, server)
			if err != nil {
				t.Fatal(err)
			}
			defer func() {
				if err := c.Close(); err != nil {
					t.Errorf("close: %v", err)
				}
			}()
			r := &runner{cfg: LaneConfig{Name: c.Lane()}, rec: NewRecorder(c.Lane()), client: c, version: c.ProtocolVersion(), called: map[string]int{}}
			if want := v; want != VersionDefault && r.version != want {
				t.Fatalf("negotiated %s, want %s", r.version, want)
			}
			tools, err := c.ListTools(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if got := strings.Join(toolNames(tools), ","); got != strings.Join(ToolNames, ",") {
				t.Fatalf("tools %s", got)
			}
			for _, tl := range tools {
				if (len(tl.OutputSchema) > 0) != r.structured() || tl.HasAnnotations != r.annotated() {
					t.Fatalf("%s in %s: outputSchema %v annotations %v", tl.Name, r.version, len(tl.OutputSchema) > 0, tl.HasAnnotations)
				}
			}
			if r.structured() {
				r.schemas, err = CompileSchemas(tools)
			} else {
				r.schemas, err = GoSDKReferenceSchemas(ctx, server)
			}
			if err != nil {
				t.Fatal(err)
			}
			hash := strings.Repeat("0", 64)
			r.rec.Run("setup", func() error {
				calls := []struct {
					tool string
					args map[string]any
					want expect
				}{
					{"reclazz_status", nil, wantOK},
					{"reclazz_doctor", nil, wantOK},
					{"reclazz_scan", nil, wantOK},
					{"reclazz_pending", nil, wantOK},
					{"reclazz_diagnose", map[string]any{"className": "Service"}, wantOK},
					{"reclazz_reload_control", map[string]any{"action": "status"}, wantOK},
					{"reclazz_build", map[string]any{"state": "started", "owner": "shape"}, wantOK},
					{"reclazz_build", map[string]any{"state": "ok", "owner": "other"}, wantToolError},
					{"reclazz_verify", map[string]any{"className": "Service", "sha256": hash}, wantToolError},
					{"reclazz_verify_batch", map[string]any{"items": []map[string]any{{"className": "Service", "sha256": hash}}}, wantToolError},
					{"reclazz_doctor", map[string]any{"portFile": "missing agent.port"}, wantToolError},
					{"reclazz_scan", map[string]any{"portFile": "missing agent.port"}, wantToolError},
				}
				for _, cl := range calls {
					if _, err := r.call(ctx, cl.tool, cl.args, cl.want); err != nil {
						t.Error(err)
					}
				}
				want := wantArgError
				if r.argErrorsAreToolErrors() {
					want = wantArgToolError
				}
				if _, err := r.call(ctx, "reclazz_build", map[string]any{"state": "invented", "owner": "shape"}, want); err != nil {
					t.Error(err)
				}
				return nil
			})
			ev := r.rec.Evaluation(nil)
			// Legacy build/scan/pending/diagnose results are prose: no data to validate.
			wantWitnesses := 12
			if !r.structured() {
				wantWitnesses = 6 // status, doctor ×2, reload_control, verify, verify_batch
			}
			if ev.Summary.NegativeWitnesses != wantWitnesses {
				t.Errorf("negative witnesses %d, want %d", ev.Summary.NegativeWitnesses, wantWitnesses)
			}
			if got := agent.Commands(); len(got) == 0 {
				t.Error("the fake agent saw no command")
			}
			if se := c.(interface{ ServerStderr() string }).ServerStderr(); se != "" {
				t.Errorf("buildguard mcp wrote to stderr: %q", se)
			}
		})
	}
}

// TestTSToolShapes runs ts/shape.test.mjs (the TypeScript SDK's tool-shape
// checks) with node --test against the real `buildguard mcp` subprocess and
// the fake agent. It installs node_modules with npm ci when they are missing
// and fails, naming the install command, when that is impossible.
func TestTSToolShapes(t *testing.T) {
	t.Parallel()
	if _, err := exec.LookPath("node"); err != nil {
		t.Fatalf("node not on PATH: install Node 20 (apt-get install -y nodejs npm), then (cd harness/clients/ts && %s)", strings.Join(NpmCI, " "))
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	var log strings.Builder
	if err := EnsureNodeModules(ctx, "ts", &log); err != nil {
		t.Fatalf("%v\n%s", err, log.String())
	}
	bin := testbin.Build(t, t.TempDir())
	server, agent := shapeServer(t, bin)
	cmd := exec.CommandContext(ctx, "node", "--test", "shape.test.mjs")
	cmd.Dir = "ts"
	cmd.Env = append(os.Environ(), "BUILDGUARD_BIN="+bin, "AGENT_PORT_FILE="+agent.PortFile(), "LAUNCH_DIR="+server.Dir)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("node --test shape.test.mjs: %v\n%s", err, out)
	}
	if !strings.Contains(string(out), "# pass 1") {
		t.Fatalf("node --test ran no passing test:\n%s", out)
	}
	if len(agent.Commands()) == 0 {
		t.Error("the fake agent saw no command")
	}
}

// TestTSRecorder runs the TypeScript recorder's negative tests and checks
// that every lane module parses.
func TestTSRecorder(t *testing.T) {
	t.Parallel()
	if _, err := exec.LookPath("node"); err != nil {
		t.Fatal("node not on PATH: install Node 20 (apt-get install -y nodejs npm)")
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "node", "--test", "evaluation.test.mjs")
	cmd.Dir = "ts"
	out, err := cmd.CombinedOutput()
	if err != nil || !strings.Contains(string(out), "# fail 0") {
		t.Fatalf("node --test evaluation.test.mjs: %v\n%s", err, out)
	}
	// The live-JVM lane runs only under mage; at least it must parse.
	for _, f := range []string{TSTestFile, "checks.mjs", "evaluation.mjs", "shape.test.mjs"} {
		check := exec.CommandContext(ctx, "node", "--check", f)
		check.Dir = "ts"
		if out, err := check.CombinedOutput(); err != nil {
			t.Errorf("node --check %s: %v\n%s", f, err, out)
		}
	}
}
