//go:build unix

package hostlanes

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"github.com/pelletier/go-toml/v2"

	"github.com/buildguard/buildguard/harness/hostlanes/model"
)

// Host is one MCP host's command line: its pinned npm package, how a lane
// sets it up and runs it one-shot against the scripted model, and the tool
// calls its model makes (docs/host-matrix.md#1).
type Host struct {
	// Name is the host's name for `buildguard init --host`; Title is its
	// name for people.
	Name, Title string
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
	// SetToolTimeout sets how long the host waits for one MCP tool call,
	// through the host's own setting, and returns the environment that
	// takes; ToolTimeoutSetting names that setting in the matrix.
	SetToolTimeout     func(l *Lane, d time.Duration) ([]string, error)
	ToolTimeoutSetting string
	// UserSteps says in the matrix what a user of the host does for
	// buildguard's tools to run, as the lane does in Setup and Args.
	UserSteps string
}

// Claude is Claude Code: its Messages API calls go to ANTHROPIC_BASE_URL;
// `-p` runs one prompt with the MCP config init wrote, and its MCP tools are
// deferred, so the model selects the tool with ToolSearch first.
var Claude = Host{
	Name:        "claude",
	Title:       "Claude Code",
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
	SetToolTimeout: func(_ *Lane, d time.Duration) ([]string, error) {
		return []string{"MCP_TOOL_TIMEOUT=" + strconv.FormatInt(d.Milliseconds(), 10)}, nil
	},
	ToolTimeoutSetting: "`MCP_TOOL_TIMEOUT` (ms)",
	UserSteps: "approve the project server `buildguard` when `claude` starts in the project (or set `enableAllProjectMcpServers`; " +
		"the lane names the file with `--mcp-config`); allow the safe build, as the lane does with " +
		"`--allowedTools mcp__buildguard__reclazz_safe_build` in `claude -p`, or when Claude Code asks; nothing for `ToolSearch`, " +
		"which the model uses by itself to load buildguard's deferred tools",
}

// Codex is the Codex CLI: `codex exec` runs one prompt; the model provider
// "scripted" of config.toml points at the model's Responses API, and the
// entry init wrote gets default_tools_approval_mode = "approve", without
// which exec refuses every MCP call ("approval policy is never").
var Codex = Host{
	Name:    "codex",
	Title:   "Codex",
	Package: "@openai/codex",
	Version: "0.171.0",
	Command: "codex",
	Driven: "`codex exec --skip-git-repo-check PROMPT`; `~/.codex/config.toml`: `model_provider = \"scripted\"`, " +
		"`[model_providers.scripted]` with `base_url` at the model's `/v1`, `wire_api = \"responses\"`, `env_key`; " +
		"`default_tools_approval_mode = \"approve\"` in the entry init wrote; Responses API",
	ToolName: "`reclazz_safe_build` in the namespace `mcp__buildguard`",
	Calls: func(build string) []model.Call {
		return []model.Call{{Name: "reclazz_safe_build", Namespace: "mcp__buildguard", Input: map[string]any{"build": build}}}
	},
	Setup: func(l *Lane) error {
		return editTOML(filepath.Join(l.Home, ".codex", "config.toml"), func(cfg map[string]any) error {
			servers, _ := cfg["mcp_servers"].(map[string]any)
			entry, _ := servers["buildguard"].(map[string]any)
			if entry == nil {
				return fmt.Errorf("config.toml has no [mcp_servers.buildguard]")
			}
			entry["default_tools_approval_mode"] = "approve"
			cfg["model"] = "gpt-5"
			cfg["model_provider"] = "scripted"
			cfg["model_providers"] = map[string]any{"scripted": map[string]any{"name": "scripted", "base_url": l.ModelURL + "/v1",
				"wire_api": "responses", "env_key": "SCRIPTED_API_KEY"}}
			return nil
		})
	},
	Args: func(_ *Lane, prompt string) []string { return []string{"exec", "--skip-git-repo-check", prompt} },
	Env:  func(*Lane) []string { return []string{"SCRIPTED_API_KEY=dummy"} },
	SetToolTimeout: func(l *Lane, d time.Duration) ([]string, error) {
		return nil, editTOML(filepath.Join(l.Home, ".codex", "config.toml"), func(cfg map[string]any) error {
			servers, _ := cfg["mcp_servers"].(map[string]any)
			entry, _ := servers["buildguard"].(map[string]any)
			if entry == nil {
				return fmt.Errorf("config.toml has no [mcp_servers.buildguard]")
			}
			entry["tool_timeout_sec"] = d.Seconds()
			return nil
		})
	},
	ToolTimeoutSetting: "`tool_timeout_sec` in `[mcp_servers.buildguard]`",
	UserSteps: "for `codex exec`, add `default_tools_approval_mode = \"approve\"` to the `[mcp_servers.buildguard]` table init " +
		"wrote, as the lane does: without it exec refuses every MCP call (\"approval policy is never\"); in the interactive " +
		"`codex`, approve the calls when asked; run `buildguard init --host codex` in the project you work in, as the entry " +
		"names one project",
}

// Gemini is the Gemini CLI: `gemini -p` runs one prompt against
// GOOGLE_GEMINI_BASE_URL with an API key; it needs the key chosen as its
// auth in ~/.gemini/settings.json and the project trusted, else it
// disables the project's MCP servers.
var Gemini = Host{
	Name:    "gemini",
	Title:   "Gemini CLI",
	Package: "@google/gemini-cli",
	Version: "0.61.0",
	Command: "gemini",
	Driven: "`gemini -p PROMPT --approval-mode yolo -o json`; `GOOGLE_GEMINI_BASE_URL` at the model, `GEMINI_API_KEY=dummy`; " +
		"`security.auth.selectedType = \"gemini-api-key\"` in `~/.gemini/settings.json`, the project in " +
		"`~/.gemini/trustedFolders.json`; `streamGenerateContent` SSE, and `generateContent` for its router",
	ToolName: "`mcp_buildguard_reclazz_safe_build`",
	Calls: func(build string) []model.Call {
		return []model.Call{{Name: "mcp_buildguard_reclazz_safe_build", Input: map[string]any{"build": build}}}
	},
	Setup: func(l *Lane) error {
		dir := filepath.Join(l.Home, ".gemini")
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return err
		}
		if err := writeJSON(filepath.Join(dir, "settings.json"), map[string]any{
			"security": map[string]any{"auth": map[string]any{"selectedType": "gemini-api-key"}}}); err != nil {
			return err
		}
		return writeJSON(filepath.Join(dir, "trustedFolders.json"), map[string]any{l.Project: "TRUST_FOLDER"})
	},
	Args: func(_ *Lane, prompt string) []string {
		return []string{"-p", prompt, "--approval-mode", "yolo", "-o", "json"}
	},
	Env: func(l *Lane) []string {
		return []string{"GOOGLE_GEMINI_BASE_URL=" + l.ModelURL, "GEMINI_API_KEY=dummy"}
	},
	SetToolTimeout: func(l *Lane, d time.Duration) ([]string, error) {
		path := filepath.Join(l.Project, ".gemini", "settings.json")
		b, err := os.ReadFile(path)
		if err != nil {
			return nil, err
		}
		var cfg map[string]any
		if err := json.Unmarshal(b, &cfg); err != nil {
			return nil, fmt.Errorf("reading %s: %w", path, err)
		}
		servers, _ := cfg["mcpServers"].(map[string]any)
		entry, _ := servers["buildguard"].(map[string]any)
		if entry == nil {
			return nil, fmt.Errorf("%s has no mcpServers.buildguard", path)
		}
		entry["timeout"] = d.Milliseconds()
		return nil, writeJSON(path, cfg)
	},
	ToolTimeoutSetting: "`timeout` (ms) in the entry `mcpServers.buildguard` of the project's `.gemini/settings.json`",
	UserSteps: "trust the project folder when `gemini` asks (or in `~/.gemini/trustedFolders.json`, as the lane does): Gemini CLI " +
		"disables every MCP server of an untrusted folder; approve the calls, or run `gemini -p` with `--approval-mode yolo` " +
		"as the lane does; with `--answer-within`, keep a build within 5 answers (Gemini CLI stops a session after the same " +
		"call 5 times in a row) or set `model.disableLoopDetection`",
}

// Hosts are the hosts the lanes run, in order.
var Hosts = []Host{Claude, Codex, Gemini}

// editTOML rewrites the TOML file at path through edit.
func editTOML(path string, edit func(map[string]any) error) error {
	b, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	var cfg map[string]any
	if err := toml.Unmarshal(b, &cfg); err != nil {
		return fmt.Errorf("reading %s: %w", path, err)
	}
	if err := edit(cfg); err != nil {
		return err
	}
	if b, err = toml.Marshal(cfg); err != nil {
		return err
	}
	return os.WriteFile(path, b, 0o600)
}
