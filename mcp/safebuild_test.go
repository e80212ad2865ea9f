//go:build unix

package mcp

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdkmcp "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/buildguard/buildguard/harness/mcptest"
	"github.com/buildguard/buildguard/internal/testsupport/wait"
	"github.com/buildguard/buildguard/mcp/protocol"
	"github.com/buildguard/buildguard/service/safebuild"
	"github.com/buildguard/buildguard/service/tools"
	"github.com/buildguard/buildguard/service/tools/toolstest"
)

func structured(t *testing.T, res *sdkmcp.CallToolResult) map[string]any {
	t.Helper()
	raw, _ := json.Marshal(res.StructuredContent)
	var m map[string]any
	if err := json.Unmarshal(raw, &m); err != nil {
		t.Fatalf("structuredContent %s: %v", raw, err)
	}
	return m
}

// TestSafeBuildProgressBeforeResult: a call with a progressToken gets
// notifications/progress with growing line counts and the latest line, all
// before its result; the result is ok, validates against the output schema,
// and proves the built bytes applied.
func TestSafeBuildProgressBeforeResult(t *testing.T) {
	t.Parallel()
	for transport, connect := range map[string]func(*testing.T, Caller, string, *sdkmcp.ClientOptions) *sdkmcp.ClientSession{
		"stdio": connectSDKClientWith,
		// Over HTTP a call with a progressToken is answered as an event
		// stream: the notifications, then the answer (docs/http.md#3).
		"http": connectSDKClientHTTP,
	} {
		t.Run(transport, func(t *testing.T) {
			t.Parallel()
			testSafeBuildProgressBeforeResult(t, connect)
		})
	}
}

func testSafeBuildProgressBeforeResult(t *testing.T, connect func(*testing.T, Caller, string, *sdkmcp.ClientOptions) *sdkmcp.ClientSession) {
	p := mcptest.NewBuildProject(t, map[string]string{"ok": mcptest.OKBuild})
	var mu sync.Mutex
	var progress []*sdkmcp.ProgressNotificationParams
	done := false
	late := 0
	cs := connect(t, p.Svc, protocol.Version20251125, &sdkmcp.ClientOptions{
		ProgressNotificationHandler: func(_ context.Context, req *sdkmcp.ProgressNotificationClientRequest) {
			mu.Lock()
			defer mu.Unlock()
			if done {
				late++
			}
			progress = append(progress, req.Params)
		},
	})
	params := &sdkmcp.CallToolParams{Name: tools.ToolSafeBuild, Arguments: map[string]any{}}
	params.SetProgressToken("build-1")
	res, err := cs.CallTool(context.Background(), params)
	mu.Lock()
	done = true
	got := append([]*sdkmcp.ProgressNotificationParams(nil), progress...)
	mu.Unlock()
	if err != nil {
		t.Fatal(err)
	}
	m := structured(t, res)
	if res.IsError || m["outcome"] != "ok" {
		t.Fatalf("result: %v", m)
	}
	validateOutput(t, tools.ToolSafeBuild, res)
	if len(got) == 0 {
		t.Fatal("no progress before the result")
	}
	for i, pr := range got {
		if pr.ProgressToken != "build-1" || pr.Message == "" || (i > 0 && pr.Progress <= got[i-1].Progress) {
			t.Errorf("progress %d: %+v", i, pr)
		}
	}
	if !strings.HasPrefix(got[0].Message, "compiling step") {
		t.Errorf("first progress message %q", got[0].Message)
	}
	cc := m["changedClasses"].(map[string]any)
	classes := cc["classes"].([]any)
	if cc["allApplied"] != true || len(classes) != 1 {
		t.Fatalf("changedClasses %v", cc)
	}
	c0 := classes[0].(map[string]any)
	want, _ := os.ReadFile(filepath.Join(p.Out, "app", "Main.class"))
	if c0["className"] != "app.Main" || c0["status"] != "applied" || c0["sha256"] != sha256Hex(want) {
		t.Errorf("changed class %v, want app.Main applied with the built bytes", c0)
	}
	// A later call that names no token gets no progress at all.
	mu.Lock()
	before := len(progress)
	mu.Unlock()
	if res, err := cs.CallTool(context.Background(), &sdkmcp.CallToolParams{Name: tools.ToolSafeBuild, Arguments: map[string]any{"build": "ok"}}); err != nil || res.IsError {
		t.Fatalf("second build: %v %v", err, res)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(progress) != before {
		t.Errorf("progress sent for a call without a progressToken")
	}
	if late != 0 {
		t.Errorf("%d progress notifications after the result", late)
	}
}

// TestSafeBuildCancel: cancelling the call (the client sends
// notifications/cancelled) terminates the build's process group and BUILD
// failed is acknowledged; the agent keeps its hold.
func TestSafeBuildCancel(t *testing.T) {
	t.Parallel()
	p := mcptest.NewBuildProject(t, map[string]string{"ok": mcptest.HangBuild})
	cs := connectSDKClient(t, p.Svc, protocol.Version20250618)
	ctx, cancel := context.WithCancel(context.Background())
	errc := make(chan error, 1)
	go func() {
		_, err := cs.CallTool(ctx, &sdkmcp.CallToolParams{Name: tools.ToolSafeBuild, Arguments: map[string]any{}})
		errc <- err
	}()
	pids := wait.PIDFile(t, 10*time.Second, filepath.Join(p.Dir, "pids"))
	cancel()
	if err := <-errc; !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled call returned %v", err)
	}
	wctx, wcancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer wcancel()
	if _, err := p.Agent.WaitCommand(wctx, "BUILD failed request="); err != nil {
		t.Fatalf("BUILD failed never reached the agent: %v", err)
	}
	wait.Gone(t, 10*time.Second, pids...)
	if held, _ := p.Agent.Hold(); !held {
		t.Error("the hold is gone after a cancelled build")
	}
	// The server serves the next build once the cancelled one has finished.
	os.WriteFile(filepath.Join(p.Dir, safebuild.ConfigFile), []byte(`{"builds":{"ok":{"command":["true"]}}}`), 0o644)
	for {
		res, err := cs.CallTool(context.Background(), &sdkmcp.CallToolParams{Name: tools.ToolSafeBuild, Arguments: map[string]any{}})
		if err != nil {
			t.Fatal(err)
		}
		if m := structured(t, res); m["outcome"] == "ok" {
			break
		} else if m["outcome"] != "refused" || wctx.Err() != nil {
			t.Fatalf("build after the cancelled one: %v", m)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestSafeBuildSecondCallWaitsItsTurn: while a build runs, a second call
// is not refused (docs/decisions.md#D18): it waits, its progress says where
// it stands (below 1, growing), other tools are served, a call past its
// queue timeout ends with queued-timeout, and the second build runs once
// the first has ended.
func TestSafeBuildSecondCallWaitsItsTurn(t *testing.T) {
	t.Parallel()
	p := mcptest.NewBuildProject(t, map[string]string{"ok": mcptest.HangBuild, "other": "touch other-ran"})
	var mu sync.Mutex
	var progress []*sdkmcp.ProgressNotificationParams
	queued := make(chan string, 16)
	cs := connectSDKClientWith(t, p.Svc, protocol.Version20250618, &sdkmcp.ClientOptions{
		ProgressNotificationHandler: func(_ context.Context, req *sdkmcp.ProgressNotificationClientRequest) {
			mu.Lock()
			progress = append(progress, req.Params)
			mu.Unlock()
			select {
			case queued <- req.Params.Message:
			default:
			}
		},
	})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go cs.CallTool(ctx, &sdkmcp.CallToolParams{Name: tools.ToolSafeBuild, Arguments: map[string]any{}})
	wait.PIDFile(t, 10*time.Second, filepath.Join(p.Dir, "pids"))

	params := &sdkmcp.CallToolParams{Name: tools.ToolSafeBuild, Arguments: map[string]any{"build": "other"}}
	params.SetProgressToken("second")
	second := make(chan *sdkmcp.CallToolResult, 1)
	go func() {
		res, err := cs.CallTool(context.Background(), params)
		if err != nil {
			t.Error(err)
		}
		second <- res
	}()
	select {
	case msg := <-queued:
		if !strings.Contains(msg, "place 2") || !strings.Contains(msg, `"ok"`) || !strings.Contains(msg, "running for") {
			t.Errorf("queue progress %q does not say where the call stands", msg)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("no queue progress within 10s")
	}
	if _, err := os.Stat(filepath.Join(p.Dir, "other-ran")); err == nil {
		t.Fatal("the second build ran while the first ran")
	}
	if res, err := cs.CallTool(context.Background(), &sdkmcp.CallToolParams{Name: tools.ToolStatus, Arguments: map[string]any{}}); err != nil || res.IsError {
		t.Errorf("status while a build runs: %v %+v", err, res)
	}

	// A third call with a short queue timeout gives up with queued-timeout.
	cfg := `{"builds":{"ok":{"command":["sh","-c",` + strconv.Quote(mcptest.HangBuild) + `]},"other":{"command":["sh","-c","touch other-ran"]},` +
		`"impatient":{"command":["sh","-c","touch impatient-ran"],"queueTimeoutSeconds":1}},"defaultBuild":"ok"}`
	if err := os.WriteFile(filepath.Join(p.Dir, safebuild.ConfigFile), []byte(cfg), 0o644); err != nil {
		t.Fatal(err)
	}
	res, err := cs.CallTool(context.Background(), &sdkmcp.CallToolParams{Name: tools.ToolSafeBuild, Arguments: map[string]any{"build": "impatient"}})
	if err != nil {
		t.Fatal(err)
	}
	m := structured(t, res)
	if !res.IsError || m["outcome"] != "queued-timeout" || m["owner"] != nil || !strings.Contains(m["detail"].(string), "queueTimeoutSeconds") {
		t.Errorf("impatient call: %v", m)
	}
	validateOutput(t, tools.ToolSafeBuild, res)

	cancel() // the first build ends; the second runs
	select {
	case res := <-second:
		m := structured(t, res)
		if res.IsError || m["outcome"] != "ok" {
			t.Fatalf("second call: %v", m)
		}
		validateOutput(t, tools.ToolSafeBuild, res)
	case <-time.After(30 * time.Second):
		t.Fatal("the second call did not end within 30s of the first")
	}
	if _, err := os.Stat(filepath.Join(p.Dir, "other-ran")); err != nil {
		t.Error("the second build did not run")
	}
	if _, err := os.Stat(filepath.Join(p.Dir, "impatient-ran")); err == nil {
		t.Error("the timed-out build ran")
	}
	mu.Lock()
	defer mu.Unlock()
	for i, pr := range progress {
		if i > 0 && pr.Progress <= progress[i-1].Progress {
			t.Errorf("progress %d does not grow: %v after %v", i, pr.Progress, progress[i-1].Progress)
		}
	}
	if len(progress) == 0 || progress[0].Progress >= 1 {
		t.Errorf("queue progress should stay below 1: %+v", progress)
	}
}

// TestSafeBuildFailedAndArgumentErrors: a failing build is a tool error with
// BUILD failed acknowledged; an unknown build name and a malformed
// .buildguard.json are argument errors that run nothing.
func TestSafeBuildFailedAndArgumentErrors(t *testing.T) {
	t.Parallel()
	p := mcptest.NewBuildProject(t, map[string]string{"ok": mcptest.FailBuild})
	cs := connectSDKClient(t, p.Svc, protocol.Version20250618)
	res, err := cs.CallTool(context.Background(), &sdkmcp.CallToolParams{Name: tools.ToolSafeBuild, Arguments: map[string]any{}})
	if err != nil {
		t.Fatal(err)
	}
	m := structured(t, res)
	if !res.IsError || m["outcome"] != "failed" || m["exitCode"] != 1.0 || !strings.Contains(m["output"].(map[string]any)["tail"].(string), "missingSymbol") {
		t.Errorf("failed build: %v", m)
	}
	validateOutput(t, tools.ToolSafeBuild, res)

	_, err = cs.CallTool(context.Background(), &sdkmcp.CallToolParams{Name: tools.ToolSafeBuild, Arguments: map[string]any{"build": "nope"}})
	if !isInvalidParams(err) || !strings.Contains(err.Error(), `unknown build "nope"`) {
		t.Errorf("unknown build: %v", err)
	}
	os.WriteFile(filepath.Join(p.Dir, safebuild.ConfigFile), []byte(`{"builds":{"ok":{"command":"make"}}}`), 0o644)
	_, err = cs.CallTool(context.Background(), &sdkmcp.CallToolParams{Name: tools.ToolSafeBuild, Arguments: map[string]any{}})
	if !isInvalidParams(err) || !strings.Contains(err.Error(), "invalid .buildguard.json") {
		t.Errorf("malformed config: %v", err)
	}
	if n := strings.Count(strings.Join(p.Agent.Commands(), "\n"), "BUILD started"); n != 1 {
		t.Errorf("%d holds asked for, want only the failed build's", n)
	}
}

func isInvalidParams(err error) bool {
	var je *jsonrpc.Error
	return errors.As(err, &je) && je.Code == jsonrpc.CodeInvalidParams
}

// validateOutput validates a structured result against the tool's output
// schema and requires the text to be the same JSON, except for a failed
// safe build, whose text leads with its diagnostics (docs/safe-build.md#12).
func validateOutput(t *testing.T, tool string, res *sdkmcp.CallToolResult) {
	t.Helper()
	raw, _ := json.Marshal(res.StructuredContent)
	if text := res.Content[0].(*sdkmcp.TextContent).Text; tool == tools.ToolSafeBuild && res.IsError {
		if len(text) > tools.MaxFailedText || !strings.HasPrefix(text, "build ") {
			t.Errorf("a failed safe build's text is not its summary:\n%s", text)
		}
	} else if !mcptest.JSONEqual(t, raw, []byte(text)) {
		t.Errorf("text %s differs from structuredContent %s", text, raw)
	}
	if err := toolstest.Validate(tool, raw); err != nil {
		t.Errorf("%s result does not validate: %v\n%s", tool, err, raw)
	}
}

func sha256Hex(b []byte) string {
	return fmt.Sprintf("%x", sha256.Sum256(b))
}

// TestSafeBuildOverHTTP: over mcp --http a safe build with a progress
// token answers as an event stream whose progress notifications come before
// the answer (docs/safe-build.md#5).
func TestSafeBuildOverHTTP(t *testing.T) {
	t.Parallel()
	p := mcptest.NewBuildProject(t, map[string]string{"ok": mcptest.OKBuild})
	srv := NewServer(Config{Caller: p.Svc, Version: "test", Logger: mcptest.TestLogger(&strings.Builder{})})
	h := srv.HTTPHandler(testToken)
	ts := httptest.NewServer(h)
	defer ts.Close()
	defer h.Close()
	f := &httpFixture{t: t, ts: ts, client: &http.Client{Timeout: 30 * time.Second}}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	code, body := f.post(ctx, `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"reclazz_safe_build","arguments":{},"_meta":{"progressToken":"h1"}}}`,
		"MCP-Protocol-Version", protocol.Version20251125)
	progress := strings.Index(body, `"method":"notifications/progress","params":{"progressToken":"h1","message":"compiling step 1"`)
	answer := strings.Index(body, `"id":1,"result":`)
	if code != http.StatusOK || progress < 0 || answer < progress || !strings.Contains(body, `"outcome":"ok"`) {
		t.Fatalf("status %d, progress at %d, answer at %d:\n%s", code, progress, answer, body)
	}
}

// TestSafeBuildRefusalNamesArguments: an MCP client whose safe build is
// refused before the command is told what to do in the tool's arguments
// (projectDir, portFile, port), never in a command-line flag
// (docs/safe-build.md#4).
func TestSafeBuildRefusalNamesArguments(t *testing.T) {
	t.Parallel()
	dir := t.TempDir() // a project without an agent
	if err := os.WriteFile(filepath.Join(dir, safebuild.ConfigFile), []byte(`{"builds": {"ok": {"command": ["touch", "marker"]}}}`), 0o644); err != nil {
		t.Fatal(err)
	}
	s := startSession(t, tools.NewService(tools.Deps{Base: dir}), time.Second)
	s.Send(initLine)
	s.Recv()
	for i, c := range []struct{ args, advice string }{
		{`{}`, "; the agent writes .reclazz/agent.port in the application's project directory: pass projectDir that directory, or portFile the agent's port file, or port its port"},
		{`{"portFile":"none.port"}`, "; point portFile at the port file the running agent wrote (.reclazz/agent.port in its project), or pass port"},
		{`{"port":"1"}`, "; start the application with the Reclazz agent attached, or point port/portFile at its current port"},
	} {
		s.Send(fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"reclazz_safe_build","arguments":%s}}`, i+1, c.args))
		var msg struct {
			Result struct {
				StructuredContent struct{ Outcome, Detail string }
			}
		}
		line := s.Recv()
		if err := json.Unmarshal([]byte(line), &msg); err != nil {
			t.Fatalf("%s: %v", line, err)
		}
		got := msg.Result.StructuredContent
		if got.Outcome != "refused" || !strings.HasSuffix(got.Detail, c.advice) || strings.Contains(got.Detail, "--") {
			t.Errorf("arguments %s: outcome %q, detail %q; want refused, ending %q, naming no flag", c.args, got.Outcome, got.Detail, c.advice)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "marker")); err == nil {
		t.Error("a refused build ran its command")
	}
}
