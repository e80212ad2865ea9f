package tools_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/buildguard/buildguard/buildguard"
	"github.com/buildguard/buildguard/harness/fakeagent"
	"github.com/buildguard/buildguard/service/tools"
)

// mcpArguments are the tools' argument names: an MCP client's words, which
// no other front's users are told (docs/decisions.md#D2).
var mcpArguments = []string{"port/portFile", "portFile", "projectDir", "timeoutMs", "hybrisHome"}

// TestToolsWordWhatToDoInTheFrontsWords: where a tool's answer says which
// setting to change — an endpoint without a port file, a project the agent
// is not confirmed in, a safe build out of time — an MCP client reads the
// tools' arguments, exactly the contract's reason strings
// (docs/mcp-server.md#1.2), and another front reads its own words and no
// argument name (docs/decisions.md#D2).
func TestToolsWordWhatToDoInTheFrontsWords(t *testing.T) {
	t.Parallel()
	elsewhere := fakeagent.NewServer(t, fakeagent.WithDoctor(fakeagent.Evidence{WorkingDirectory: t.TempDir()}))
	gated := filepath.Dir(filepath.Dir(elsewhere.PortFile()))
	other := buildguard.Advice{buildguard.FixFindAgent: "FIND", buildguard.FixConfirmProject: "CONFIRM"}
	for _, c := range []struct {
		name, tool, key string
		args            map[string]any
		mcp, front      string
	}{
		{"no port file", tools.ToolStatus, "reason", map[string]any{"projectDir": t.TempDir()},
			"no port file found; run the app with the Reclazz agent, or pass port/portFile", "no port file found; FIND"},
		{"project not confirmed", tools.ToolStatus, "reason", map[string]any{"projectDir": gated},
			"Selected project could not be confirmed; no requested command sent. Check DOCTOR workingDirectory and projectDir.",
			"Selected project could not be confirmed; no requested command sent. CONFIRM"},
		{"session not confirmed", tools.ToolBuild, "detail", map[string]any{"projectDir": gated, "state": "started", "owner": "w"},
			"Build signal not confirmed: Cannot open build session: Selected project could not be confirmed; no requested command sent. Check DOCTOR workingDirectory and projectDir.",
			"Build signal not confirmed: Cannot open build session: Selected project could not be confirmed; no requested command sent. CONFIRM"},
		{"scan without a port file", tools.ToolScan, "detail", map[string]any{"projectDir": t.TempDir()},
			"Scan request failed: no port file found; run the app with the Reclazz agent, or pass port/portFile", "Scan request failed: no port file found; FIND"},
	} {
		if _, data := call(t, svc(), c.tool, c.args); data[c.key] != c.mcp {
			t.Errorf("%s: MCP %s %q, want %q", c.name, c.key, data[c.key], c.mcp)
		}
		_, data := call(t, tools.NewService(tools.Deps{Advice: other}), c.tool, c.args)
		if data[c.key] != c.front {
			t.Errorf("%s: the other front's %s %q, want %q", c.name, c.key, data[c.key], c.front)
		}
		for _, arg := range mcpArguments {
			if s, _ := data[c.key].(string); strings.Contains(s, arg) {
				t.Errorf("%s: the other front is told the MCP argument %s: %q", c.name, arg, s)
			}
		}
	}
}

// TestSafeBuildTimeoutSaysHowToAllowMoreTime: a safe build that runs out of
// time tells an MCP client the argument that allows more, and another
// front its own words for it, never timeoutMs.
func TestSafeBuildTimeoutSaysHowToAllowMoreTime(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		advice buildguard.Advice
		end    string
	}{
		{nil, ". Raise timeoutSeconds in .buildguard.json or pass a larger timeoutMs"},
		{buildguard.Advice{buildguard.FixBuildTime: "MORE TIME"}, "until this project's next successful safe build. MORE TIME"},
	} {
		agent := fakeagent.NewServer(t)
		dir := t.TempDir()
		conf := `{"builds": {"hang": {"command": ["sleep", "30"]}}}`
		if err := os.WriteFile(filepath.Join(dir, ".buildguard.json"), []byte(conf), 0o644); err != nil {
			t.Fatal(err)
		}
		s := tools.NewService(tools.Deps{Base: dir, Advice: c.advice})
		_, data := call(t, s, tools.ToolSafeBuild, map[string]any{"port": port(agent), "timeoutMs": "1000"})
		detail, _ := data["detail"].(string)
		if data["outcome"] != "timeout" || !strings.HasSuffix(detail, c.end) {
			t.Errorf("advice %v: outcome %v, detail %q; want a timeout whose detail ends %q", c.advice, data["outcome"], detail, c.end)
		}
		if c.advice != nil && strings.Contains(detail, "timeoutMs") {
			t.Errorf("the other front is told timeoutMs: %q", detail)
		}
	}
}
