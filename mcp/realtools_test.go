package mcp

import (
	"context"
	"encoding/json"
	"testing"

	sdkmcp "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/buildguard/buildguard/harness/fakeagent"
	"github.com/buildguard/buildguard/harness/mcptest"
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
		if !mcptest.JSONEqual(t, raw, []byte(text)) {
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
