package mcp

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"slices"
	"strings"
	"testing"

	sdkmcp "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/buildguard/buildguard/service/tools"
)

// TestSDKAcceptsTheTools runs go-sdk's checks of a tool's definition (name,
// input schema of type object, output schema, x-mcp-header annotations) on
// every tool: the server answers tools/list and tools/call itself and
// registers the tools with go-sdk only for a paged tools/list
// (docs/performance.md#2), so these checks run here. No input schema has an
// x-mcp-header annotation, so go-sdk's Mcp-Param header checks over HTTP,
// which look registered tools up, have nothing to check either.
func TestSDKAcceptsTheTools(t *testing.T) {
	t.Parallel()
	var logs bytes.Buffer
	sdk := sdkmcp.NewServer(&sdkmcp.Implementation{Name: ServerName, Version: "test"},
		&sdkmcp.ServerOptions{Logger: slog.New(slog.NewTextHandler(&logs, nil))})
	for _, def := range tools.Definitions() {
		sdk.AddTool(def, func(context.Context, *sdkmcp.CallToolRequest) (*sdkmcp.CallToolResult, error) { return nil, nil })
	}
	if logs.Len() > 0 {
		t.Errorf("go-sdk's AddTool complained:\n%s", &logs)
	}
	for _, def := range tools.Definitions() {
		if in, _ := def.InputSchema.(json.RawMessage); in == nil || bytes.Contains(in, []byte("x-mcp-header")) {
			t.Errorf("%s: input schema %s: want encoded bytes without x-mcp-header", def.Name, in)
		}
	}
}

// TestToolsListIgnoresCursor: tools/list lists the ten tools in the
// contract's order (docs/mcp-server.md#4.1), whole whatever cursor it
// carries: the transports forward only the fields they check, and a cursor
// is not one (docs/mcp-server.md#2.2); a tools/call after it is answered.
func TestToolsListIgnoresCursor(t *testing.T) {
	t.Parallel()
	lines := []string{
		`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`,
		`{"jsonrpc":"2.0","method":"notifications/initialized"}`,
		`{"jsonrpc":"2.0","id":2,"method":"tools/list"}`,
		`{"jsonrpc":"2.0","id":3,"method":"tools/list","params":{"cursor":"not a cursor"}}`,
		`{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"reclazz_status","arguments":{}}}`,
	}
	out := strings.Split(strings.TrimSpace(serveAll(t, strings.Join(lines, "\n")+"\n")), "\n")
	if len(out) != 4 {
		t.Fatalf("got %d answers, want 4:\n%s", len(out), strings.Join(out, "\n"))
	}
	for _, line := range out[1:3] {
		var m struct {
			Result struct {
				Tools []struct {
					Name string `json:"name"`
				} `json:"tools"`
			} `json:"result"`
		}
		if err := json.Unmarshal([]byte(line), &m); err != nil {
			t.Fatalf("%v: %s", err, line)
		}
		var names []string
		for _, tool := range m.Result.Tools {
			names = append(names, tool.Name)
		}
		if !slices.Equal(names, tools.Names()) {
			t.Errorf("tools/list: %v, want %v", names, tools.Names())
		}
	}
	if !strings.HasPrefix(out[3], `{"jsonrpc":"2.0","id":4,"result":{"content":[{"type":"text"`) {
		t.Errorf("tools/call: %s, want a result", out[3])
	}
}
