//go:build unix

package mcp

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	sdkmcp "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/buildguard/buildguard/harness/mcptest"
	"github.com/buildguard/buildguard/mcp/protocol"
	"github.com/buildguard/buildguard/service/tools"
)

// noisyFailBuild prints 3000 lines of ordinary output around javac's error
// on a file of the project (an absolute path, as Gradle prints it), then
// fails.
const noisyFailBuild = `i=0; while [ $i -lt 1500 ]; do echo "[INFO] compiling unit $i of the project"; i=$((i+1)); done; ` +
	`echo "$PWD/src/main/java/B.java:3: error: cannot find symbol" >&2; echo "        return missingSymbol;" >&2; echo "               ^" >&2; ` +
	`echo "  symbol:   variable missingSymbol" >&2; echo "1 error" >&2; ` +
	`i=0; while [ $i -lt 1500 ]; do echo "[INFO] reactor summary line $i"; i=$((i+1)); done; exit 1`

// TestSafeBuildFailedLeadsWithDiagnostics: a failed safe build's text leads
// with the compiler's error (file relative to the project, line, column)
// within 4 KiB, its structured result lists it, and the whole log is a
// resource link the server reads back; nothing but build logs reads back.
func TestSafeBuildFailedLeadsWithDiagnostics(t *testing.T) {
	t.Parallel()
	for transport, connect := range map[string]func(*testing.T, Caller, string, *sdkmcp.ClientOptions) *sdkmcp.ClientSession{
		"stdio": connectSDKClientWith,
		"http":  connectSDKClientHTTP,
	} {
		t.Run(transport, func(t *testing.T) {
			t.Parallel()
			p := mcptest.NewBuildProject(t, map[string]string{"ok": noisyFailBuild})
			cs := connect(t, p.Svc, protocol.Version20250618, nil)
			res, err := cs.CallTool(context.Background(), &sdkmcp.CallToolParams{Name: tools.ToolSafeBuild, Arguments: map[string]any{}})
			if err != nil {
				t.Fatal(err)
			}
			validateOutput(t, tools.ToolSafeBuild, res)
			m := structured(t, res)
			diags, _ := m["diagnostics"].([]any)
			if !res.IsError || len(diags) != 1 {
				t.Fatalf("isError %v, diagnostics %v", res.IsError, m["diagnostics"])
			}
			d := diags[0].(map[string]any)
			if d["file"] != "src/main/java/B.java" || d["line"] != 3.0 || d["column"] != 16.0 || d["message"] != "cannot find symbol; symbol: variable missingSymbol" {
				t.Errorf("diagnostic %v", d)
			}
			if len(res.Content) != 2 {
				t.Fatalf("content %d blocks, want the text and the log's link", len(res.Content))
			}
			text := res.Content[0].(*sdkmcp.TextContent).Text
			lines := strings.Split(text, "\n")
			if len(text) > tools.MaxFailedText || !strings.HasPrefix(lines[0], `build "ok": failed (exit 1): 1 error, 0 warnings`) ||
				lines[1] != "src/main/java/B.java:3:16: error: cannot find symbol; symbol: variable missingSymbol" {
				t.Errorf("text (%d bytes):\n%s", len(text), text)
			}
			link, ok := res.Content[1].(*sdkmcp.ResourceLink)
			logFile := m["output"].(map[string]any)["logFile"].(string)
			if !ok || link.URI != tools.LogURI(logFile) || link.MIMEType != "text/plain" || link.Size == nil || *link.Size < 50000 {
				t.Fatalf("link %+v, want %s", res.Content[1], logFile)
			}
			rr, err := cs.ReadResource(context.Background(), &sdkmcp.ReadResourceParams{URI: link.URI})
			if err != nil {
				t.Fatal(err)
			}
			whole, _ := os.ReadFile(logFile)
			if len(rr.Contents) != 1 || rr.Contents[0].Text != string(whole) || !strings.Contains(rr.Contents[0].Text, "reactor summary line 1499") {
				t.Errorf("resources/read gave %d contents, not the whole log", len(rr.Contents))
			}
			for _, path := range []string{filepath.Join(p.Dir, ".buildguard.json"), filepath.Join(p.Dir, ".buildguard", "owner"), "/etc/passwd"} {
				if _, err := cs.ReadResource(context.Background(), &sdkmcp.ReadResourceParams{URI: tools.LogURI(path)}); !isInvalidParams(err) || !strings.Contains(err.Error(), "Resource not found") {
					t.Errorf("resources/read of %s: %v, want Resource not found", path, err)
				}
			}
		})
	}
}

// TestSafeBuildAnswerOnTheWire: as the server writes a failed safe build's
// answer, every resource_link has a non-empty name (Codex fails the whole
// call of a link without one, docs/hosts.md#9), and structuredContent, the
// part Codex hands its model, is one line of at most 10 KiB that starts
// with the outcome.
func TestSafeBuildAnswerOnTheWire(t *testing.T) {
	t.Parallel()
	p := mcptest.NewBuildProject(t, map[string]string{"ok": noisyFailBuild})
	s := startSession(t, p.Svc, time.Second)
	s.Send(initLine)
	s.Recv()
	s.Send(`{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"reclazz_safe_build","arguments":{}}}`)
	line := s.Recv()
	var resp struct {
		Result struct {
			Content           []map[string]json.RawMessage `json:"content"`
			StructuredContent json.RawMessage              `json:"structuredContent"`
		} `json:"result"`
	}
	if err := json.Unmarshal([]byte(line), &resp); err != nil {
		t.Fatalf("%v: %s", err, line)
	}
	links := 0
	for _, c := range resp.Result.Content {
		if string(c["type"]) != `"resource_link"` {
			continue
		}
		links++
		var name string
		if err := json.Unmarshal(c["name"], &name); err != nil || name == "" {
			t.Errorf("a resource_link without a name: %s", line)
		}
	}
	sc := resp.Result.StructuredContent
	if links != 1 || len(sc) > 10<<10 || strings.ContainsRune(string(sc), '\n') || !strings.HasPrefix(string(sc), `{"outcome":"failed","exitCode":1,"errors":1,`) {
		t.Errorf("%d links, structuredContent of %d bytes: %.200s", links, len(sc), sc)
	}
}

// TestSafeBuildFailedLegacyText: sessions before 2025-06-18 get the same
// diagnostics-led text, and no resource link.
func TestSafeBuildFailedLegacyText(t *testing.T) {
	t.Parallel()
	p := mcptest.NewBuildProject(t, map[string]string{"ok": noisyFailBuild})
	cs := connectSDKClient(t, p.Svc, protocol.Version20250326)
	res, err := cs.CallTool(context.Background(), &sdkmcp.CallToolParams{Name: tools.ToolSafeBuild, Arguments: map[string]any{}})
	if err != nil {
		t.Fatal(err)
	}
	if res.StructuredContent != nil || len(res.Content) != 1 {
		t.Fatalf("legacy shape: structured %v, %d blocks", res.StructuredContent != nil, len(res.Content))
	}
	text := res.Content[0].(*sdkmcp.TextContent).Text
	if len(text) > tools.MaxFailedText || !strings.Contains(text, "\nsrc/main/java/B.java:3:16: error: cannot find symbol") {
		t.Errorf("text:\n%s", text)
	}
}
