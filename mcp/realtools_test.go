package mcp

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	sdkmcp "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/buildguard/buildguard/harness/fakeagent"
	"github.com/buildguard/buildguard/mcp/protocol"
	"github.com/buildguard/buildguard/service/tools"
	"github.com/buildguard/buildguard/service/tools/toolstest"
)

// sha is the SHA-256 the verification calls ask for.
const sha = "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"

// TestRealToolsAgainstFakeAgent plugs the real *tools.Service into the server
// and drives it with the go-sdk client against the fake agent: every
// structuredContent validates against the tool's output schema and equals
// the text; a legacy session gets the legacy text instead.
func TestRealToolsAgainstFakeAgent(t *testing.T) {
	t.Parallel()
	agent := fakeagent.NewServer(t)
	svc := tools.NewService(tools.Deps{Base: agent.Dir()})
	ctx := context.Background()

	cs := connectSDKClient(t, svc, protocol.Version20250618)
	calls := []struct {
		name    string
		args    map[string]any
		isError bool
	}{
		{tools.ToolStatus, map[string]any{}, false},
		{tools.ToolScan, map[string]any{}, false},
		{tools.ToolPending, map[string]any{}, false},
		{tools.ToolDiagnose, map[string]any{"className": "app.Main"}, false},
		{tools.ToolDoctor, map[string]any{}, false},
		{tools.ToolReloadControl, map[string]any{"action": "status"}, false},
		{tools.ToolBuild, map[string]any{"state": "started", "owner": "test-owner"}, false},
		{tools.ToolVerify, map[string]any{"className": "app.Main", "sha256": sha}, true},
		{tools.ToolVerifyBatch, map[string]any{"items": []any{map[string]any{"className": "app.Main", "sha256": sha}}}, true},
		{tools.ToolStatus, map[string]any{"port": "1"}, false},
		{tools.ToolPending, map[string]any{"port": "65536"}, true},
	}
	for _, c := range calls {
		res, err := cs.CallTool(ctx, &sdkmcp.CallToolParams{Name: c.name, Arguments: c.args})
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if res.IsError != c.isError {
			t.Errorf("%s %v: isError %v, want %v: %+v", c.name, c.args, res.IsError, c.isError, res.StructuredContent)
		}
		raw, _ := json.Marshal(res.StructuredContent)
		text := res.Content[0].(*sdkmcp.TextContent).Text
		if !jsonEqual(t, raw, []byte(text)) {
			t.Errorf("%s: text %s differs from structuredContent %s", c.name, text, raw)
		}
		if err := toolstest.Validate(c.name, raw); err != nil {
			t.Errorf("%s: structuredContent %s violates the output schema: %v", c.name, raw, err)
		}
	}
	_, err := cs.CallTool(ctx, &sdkmcp.CallToolParams{Name: tools.ToolStatus, Arguments: map[string]any{"timeoutMs": "0"}})
	if err == nil {
		t.Error("timeoutMs 0 at 2025-06-18: want a -32602 error")
	}

	legacy := connectSDKClient(t, svc, protocol.Version20241105)
	res, err := legacy.CallTool(ctx, &sdkmcp.CallToolParams{Name: tools.ToolScan, Arguments: map[string]any{}})
	if err != nil {
		t.Fatal(err)
	}
	if res.StructuredContent != nil || res.Content[0].(*sdkmcp.TextContent).Text != "Sent SCAN to the agent. Acceptance and reload completion are not confirmed." {
		t.Errorf("legacy scan: %+v %+v", res.StructuredContent, res.Content[0])
	}
}

// TestRealBatchCancel: a real verify_batch waiting (timeoutMs 60000) for a
// receipt the agent never sends is cancelled by notifications/cancelled: no
// answer is ever written, and the slot frees long before the 60 s budget, so
// the cancellation reached the agent exchange itself.
func TestRealBatchCancel(t *testing.T) {
	t.Parallel()
	agent := fakeagent.NewServer(t, fakeagent.WithReply(func(r *fakeagent.Reply) {
		if r.Kind == fakeagent.KindVerify {
			fakeagent.DropReply(r)
		}
	}))
	s := startSession(t, tools.NewService(tools.Deps{Base: agent.Dir()}), time.Second)
	s.send(`{"jsonrpc":"2.0","id":"batch","method":"tools/call","params":{"name":"reclazz_verify_batch","arguments":{"timeoutMs":"60000","items":[{"className":"app.Main","sha256":"` + sha + `"}]}}}`)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if _, err := agent.WaitCommand(ctx, "VERIFY "); err != nil {
		t.Fatalf("the batch never sent VERIFY: %v", err)
	}
	s.send(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"batch"}}`)
	for i := 0; ; i++ {
		s.send(fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"reclazz_status"}}`, i))
		got := s.recv()
		if field(t, got, "id") != fmt.Sprint(i) {
			t.Fatalf("unexpected answer %s", got)
		}
		if !strings.Contains(got, "-32000") {
			break
		}
		if ctx.Err() != nil {
			t.Fatal("the batch slot stayed busy 10 s after cancellation")
		}
		time.Sleep(5 * time.Millisecond)
	}
	if rest := s.closeAndRest(); len(rest) != 0 {
		t.Errorf("cancelled batch answered: %q", rest)
	}
}

// TestRealInvalidBatchIsAnsweredInOrder sends invalid verification batches
// with the real *tools.Service, each followed by a request that a busy batch
// slot would refuse, and closes stdin at once: every batch is answered with
// its -32602, and nothing is refused or suppressed.
func TestRealInvalidBatchIsAnsweredInOrder(t *testing.T) {
	t.Parallel()
	var in strings.Builder
	bad := []string{
		`{"items":[]}`,
		`{"items":[{"className":"a.B","sha256":"` + sha + `","extra":1}]}`,
		`{"items":[{"className":"a.B","sha256":"` + sha + `"},{"className":"a.B","sha256":"` + sha + `"}]}`,
		`{}`,
		`{"timeoutMs":"0","items":[{"className":"a.B","sha256":"` + sha + `"}]}`,
	}
	var want strings.Builder
	for i, args := range bad {
		fmt.Fprintf(&in, `{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"reclazz_verify_batch","arguments":%s}}`+"\n", 2*i, args)
		fmt.Fprintf(&in, `{"jsonrpc":"2.0","id":%d,"method":"completion/complete"}`+"\n", 2*i+1)
		msg := "items must contain 1–32 unique className/lower-case sha256 pairs, with no extra fields"
		if strings.Contains(args, "timeoutMs") {
			msg = "timeoutMs must be an integer string between 1 and 60000"
		}
		fmt.Fprintf(&want, `{"jsonrpc":"2.0","id":%d,"error":{"code":-32602,"message":%q}}`+"\n", 2*i, msg)
		fmt.Fprintf(&want, `{"jsonrpc":"2.0","id":%d,"error":{"code":-32601,"message":"Method not found: completion/complete"}}`+"\n", 2*i+1)
	}
	var out strings.Builder
	srv := NewServer(Config{Caller: tools.NewService(tools.Deps{Base: t.TempDir()})})
	if err := srv.ServeStdio(context.Background(), strings.NewReader(in.String()), &out); err != nil {
		t.Fatalf("Serve: %v", err)
	}
	if out.String() != want.String() {
		t.Errorf("got\n%s\nwant\n%s", out.String(), want.String())
	}
}
