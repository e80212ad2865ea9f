// Package hostconfig knows where each MCP host keeps its servers and edits
// that file so that it starts `buildguard mcp` (docs/decisions.md#D15),
// losing nothing (docs/decisions.md#D13): the file is read with a bound,
// only the keys buildguard owns in its own entry are written, every other
// byte stays, and the write is atomic. JSON and JSONC files are edited in
// place on their syntax tree (comments, trailing commas and layout kept);
// Codex's TOML is edited as byte ranges of its own table and validated by a
// TOML parser before it is written; each format is read, checked and
// edited in one file (json.go, toml.go). A run of init is decided and
// planned here whole, every file read before any is written (plan.go),
// and so is what init --check starts (Checks), which CheckEntry starts as
// the host would and asks over MCP whether buildguard answers (check.go);
// the command line only words the results and what to do.
package hostconfig

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"time"
)

// Scope says whose file a host's entry lives in.
type Scope int

const (
	// Project: the file is inside the project directory.
	Project Scope = iota
	// User: the file is in the user's home and serves every project; the
	// entry names the project with --project-dir.
	User
)

// Format is the syntax of a host's config file.
type Format int

const (
	// JSON files are parsed as JSONC: comments and trailing commas are
	// accepted and kept.
	JSON Format = iota
	// TOML is Codex's config.toml.
	TOML
)

// syntax reads, checks and edits the files of one Format; each format
// keeps all of it in one file (json.go, toml.go).
type syntax interface {
	// edit checks old as every edit does (docs/decisions.md#D13) and
	// returns it with the owned fields of container.buildguard set to e's,
	// or old itself when nothing changes. Refusals wrap the Err… values.
	edit(old []byte, container string, e Entry) ([]byte, error)
	// decode returns the document's data; an empty document is an empty
	// object.
	decode(b []byte) (map[string]any, error)
}

// syntax returns the reading, checking and editing of files of format f.
func (f Format) syntax() syntax {
	if f == TOML {
		return tomlSyntax{}
	}
	return jsonSyntax{}
}

// Host describes one MCP host of docs/decisions.md#D15.
type Host struct {
	// Name is the --host value.
	Name string
	// Title is how the host calls itself.
	Title string
	// Scope says whether the file is per project or per user.
	Scope Scope
	// Format is the file's syntax.
	Format Format
	// Container is the key of the servers table: mcpServers, servers or
	// mcp_servers.
	Container string
	// Type is the "type" value the host needs in the entry; empty when the
	// host needs none (then a user's "type" is kept as it is).
	Type string
	// WorkspaceVar is the variable through which the host names the
	// project in a project-level entry's args ("${workspaceFolder}"), empty
	// when it starts the server in the project (docs/hosts.md).
	WorkspaceVar string
	// TimeoutKey is the entry's key for how long the host waits for one
	// tool call, in TimeoutUnit; empty when the host has none
	// (docs/hosts.md#1).
	TimeoutKey  string
	TimeoutUnit time.Duration
	// NextStep is the one thing the user still has to do in the host before
	// it starts the server; %s is the project directory.
	NextStep string

	file   func(Env) string
	detect func(Env) []string
}

// Env is where a run looks for files: the project directory and the user's
// home (and CODEX_HOME); tests point them at temporary directories.
type Env struct {
	// ProjectDir is the absolute project directory.
	ProjectDir string
	// Home is the user's home directory.
	Home string
	// CodexHome is $CODEX_HOME; empty means Home/.codex.
	CodexHome string
	// As is whose permissions the plan judges: nil for this process, as
	// the kernel judges it (access(2)); tests name another user.
	As *Identity
}

// EnvFromOS returns the Env for dir with the home directory and CODEX_HOME
// of the environment. Without a home directory Home is empty, and the
// user-level files have no absolute path (see File).
func EnvFromOS(dir string) Env {
	home, _ := os.UserHomeDir()
	return Env{ProjectDir: dir, Home: home, CodexHome: os.Getenv("CODEX_HOME")}
}

func (e Env) codexHome() string {
	if e.CodexHome != "" {
		return e.CodexHome
	}
	return filepath.Join(e.Home, ".codex")
}

// File returns the path of the host's config file; it is not absolute
// when the file is in a home directory that Env does not know.
func (h Host) File(e Env) string { return h.file(e) }

// Detected reports whether the host looks installed or used: its project
// folder or its user config folder exists.
func (h Host) Detected(e Env) bool {
	for _, d := range h.detect(e) {
		if !filepath.IsAbs(d) {
			continue // in a home directory Env does not know
		}
		if fi, err := os.Stat(d); err == nil && fi.IsDir() {
			return true
		}
	}
	return false
}

// WorkDir is the working directory the host starts the server in, unless
// the entry sets one (docs/hosts.md): the project for project-level hosts;
// Codex starts it in its own home, Windsurf in the user's.
func (h Host) WorkDir(e Env) string {
	switch h.Name {
	case "codex":
		return e.codexHome()
	case "windsurf":
		return e.Home
	}
	return e.ProjectDir
}

// Path is the dotted name of the entry, as messages show it.
func (h Host) Path() string { return h.Container + "." + EntryName }

// EntryName is the name of buildguard's entry in every host's servers table.
const EntryName = "buildguard"

// All lists every host of docs/decisions.md#D15, claude first.
func All() []Host {
	return []Host{
		{
			Name: "claude", Title: "Claude Code", Scope: Project, Format: JSON, Container: "mcpServers",
			NextStep: "Claude Code keeps a project server pending until you approve it: start `claude` in %s and approve buildguard (or check it with `claude mcp get buildguard`).",
			file:     func(e Env) string { return filepath.Join(e.ProjectDir, ".mcp.json") },
			detect: func(e Env) []string {
				return []string{filepath.Join(e.ProjectDir, ".claude"), filepath.Join(e.Home, ".claude")}
			},
		},
		{
			Name: "vscode", Title: "VS Code", Scope: Project, Format: JSON, Container: "servers", Type: "stdio",
			WorkspaceVar: "${workspaceFolder}",
			NextStep:     "VS Code asks you to trust a new MCP server the first time it starts it: open %s, run \"MCP: List Servers\" and start buildguard.",
			file:         func(e Env) string { return filepath.Join(e.ProjectDir, ".vscode", "mcp.json") },
			detect: func(e Env) []string {
				return []string{filepath.Join(e.ProjectDir, ".vscode"), filepath.Join(e.Home, ".vscode")}
			},
		},
		{
			Name: "cursor", Title: "Cursor", Scope: Project, Format: JSON, Container: "mcpServers",
			WorkspaceVar: "${workspaceFolder}",
			NextStep:     "Cursor lists a new project server under Settings > MCP: open %s in Cursor and enable buildguard there.",
			file:         func(e Env) string { return filepath.Join(e.ProjectDir, ".cursor", "mcp.json") },
			detect: func(e Env) []string {
				return []string{filepath.Join(e.ProjectDir, ".cursor"), filepath.Join(e.Home, ".cursor")}
			},
		},
		{
			Name: "gemini", Title: "Gemini CLI", Scope: Project, Format: JSON, Container: "mcpServers",
			TimeoutKey: "timeout", TimeoutUnit: time.Millisecond,
			NextStep: "Gemini CLI disables the MCP servers of an untrusted folder: trust %s when `gemini` asks (or in ~/.gemini/trustedFolders.json); `gemini mcp list` then shows buildguard connected.",
			file:     func(e Env) string { return filepath.Join(e.ProjectDir, ".gemini", "settings.json") },
			detect: func(e Env) []string {
				return []string{filepath.Join(e.ProjectDir, ".gemini"), filepath.Join(e.Home, ".gemini")}
			},
		},
		{
			Name: "codex", Title: "Codex", Scope: User, Format: TOML, Container: "mcp_servers",
			TimeoutKey: "tool_timeout_sec", TimeoutUnit: time.Second,
			NextStep: "Codex reads this entry for every project and starts the server in its own folder, so the entry names the project with --project-dir %s; run init again in another project to point it there.",
			file:     func(e Env) string { return filepath.Join(e.codexHome(), "config.toml") },
			detect:   func(e Env) []string { return []string{e.codexHome()} },
		},
		{
			Name: "windsurf", Title: "Windsurf", Scope: User, Format: JSON, Container: "mcpServers",
			NextStep: "Windsurf reads this entry for every project, so it names the project with --project-dir %s; refresh the servers in Cascade's MCP panel, and run init again in another project to point it there.",
			file:     func(e Env) string { return filepath.Join(e.Home, ".codeium", "windsurf", "mcp_config.json") },
			detect:   func(e Env) []string { return []string{filepath.Join(e.Home, ".codeium", "windsurf")} },
		},
	}
}

// Lookup returns the host named name.
func Lookup(name string) (Host, bool) {
	for _, h := range All() {
		if h.Name == name {
			return h, true
		}
	}
	return Host{}, false
}

// Names lists the hosts' names in order.
func Names() []string {
	hosts := All()
	names := make([]string, len(hosts))
	for i, h := range hosts {
		names[i] = h.Name
	}
	return names
}

// Select returns the hosts a run works on (docs/decisions.md#D15): those
// named, every one with all, else claude and every detected one. A host
// whose file is in a home directory env does not know is an error
// (ErrNoHome) that says what to set.
func Select(env Env, names []string, all bool) ([]Host, error) {
	var out []Host
	for _, h := range All() {
		switch {
		case len(names) > 0:
			if !slices.Contains(names, h.Name) {
				continue
			}
		case all, h.Name == "claude", h.Detected(env):
		default:
			continue
		}
		if !filepath.IsAbs(h.File(env)) {
			return nil, fmt.Errorf("%w, so %s's file cannot be found; set HOME (for Codex, or CODEX_HOME)", ErrNoHome, h.Title)
		}
		out = append(out, h)
	}
	return out, nil
}

// ErrNoHome marks a host whose file is in a home directory that is not
// known.
var ErrNoHome = errors.New("the home directory is not known")
