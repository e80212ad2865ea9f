//go:build unix

package hostlanes

import (
	"path/filepath"

	"github.com/buildguard/buildguard/harness/hostlanes/model"
)

// Host is one MCP host's command line: its pinned npm package, how a lane
// sets it up and runs it one-shot against the scripted model, and the tool
// calls its model makes (docs/host-matrix.md#1).
type Host struct {
	// Name is the host's name for `buildguard init --host`.
	Name string
	// Package and Version are the pinned npm package.
	Package, Version string
	// Command is the package's command in node_modules/.bin.
	Command string
	// Driven says in the matrix how the lane runs the host one-shot and
	// what it needs to run unattended.
	Driven string
	// ToolName is reclazz_safe_build's name as the host presents it to the
	// model, and how the model reaches it.
	ToolName string
	// PostInstall is the one install script of the package that runs, a
	// path inside the package; empty for none.
	PostInstall string
	// Calls are the scripted model's tool calls, one a turn; the last is
	// reclazz_safe_build under the name the host gives it.
	Calls func(build string) []model.Call
	// Setup writes the host's own settings into the lane's private home,
	// after init has written its entry.
	Setup func(l *Lane) error
	// Args and Env are the one-shot command's arguments and the environment
	// it needs besides HOME and PATH.
	Args func(l *Lane, prompt string) []string
	Env  func(l *Lane) []string
}

// Claude is Claude Code: its Messages API calls go to ANTHROPIC_BASE_URL;
// `-p` runs one prompt with the MCP config init wrote, and its MCP tools are
// deferred, so the model selects the tool with ToolSearch first.
var Claude = Host{
	Name:        "claude",
	Package:     "@anthropic-ai/claude-code",
	Version:     "2.1.332",
	Command:     "claude",
	PostInstall: "install.cjs",
	Driven: "`claude -p PROMPT --mcp-config .mcp.json --strict-mcp-config --allowedTools mcp__buildguard__reclazz_safe_build " +
		"--output-format stream-json --verbose`; `ANTHROPIC_BASE_URL` at the model, `ANTHROPIC_API_KEY=dummy`, " +
		"`CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1`; Messages API",
	ToolName: "`mcp__buildguard__reclazz_safe_build`, deferred: the model selects it with `ToolSearch` " +
		"(`select:mcp__buildguard__reclazz_safe_build`) first",
	Calls: func(build string) []model.Call {
		return []model.Call{
			{Name: "ToolSearch", Input: map[string]any{"query": "select:mcp__buildguard__reclazz_safe_build"}},
			{Name: "mcp__buildguard__reclazz_safe_build", Input: map[string]any{"build": build}},
		}
	},
	Setup: func(*Lane) error { return nil },
	Args: func(l *Lane, prompt string) []string {
		return []string{"-p", prompt, "--mcp-config", filepath.Join(l.Project, ".mcp.json"), "--strict-mcp-config",
			"--allowedTools", "mcp__buildguard__reclazz_safe_build", "--output-format", "stream-json", "--verbose"}
	},
	Env: func(l *Lane) []string {
		return []string{"ANTHROPIC_BASE_URL=" + l.ModelURL, "ANTHROPIC_API_KEY=dummy", "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1"}
	},
}

// Hosts are the hosts the lanes run, in order.
var Hosts = []Host{Claude}
