package cli

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/buildguard/buildguard/internal/hostconfig"
)

const initUsage = `Usage: buildguard init [--host NAME]... [--all] [--skill] [--check] [--dry-run] [--project-dir DIR]
       buildguard init --mcp [--project-dir DIR]          (the same as --host claude)

Writes the buildguard MCP server entry into each host's config (docs/hosts.md):
  claude    DIR/.mcp.json                         mcpServers.buildguard
  vscode    DIR/.vscode/mcp.json                  servers.buildguard ("type": "stdio")
  cursor    DIR/.cursor/mcp.json                  mcpServers.buildguard
  gemini    DIR/.gemini/settings.json             mcpServers.buildguard
  codex     $CODEX_HOME/config.toml (~/.codex)    [mcp_servers.buildguard]
  windsurf  ~/.codeium/windsurf/mcp_config.json   mcpServers.buildguard
Without --host: claude and every host whose project or user folder exists; --all: every host.
  --skill     also write the buildguard block into DIR/AGENTS.md (and CLAUDE.md, GEMINI.md where present)
  --check     start each configured entry as its host would and print OK or FAIL per host
  --dry-run   print the planned changes as a diff and write nothing
DIR defaults to the working directory.`

// initOptions are the parsed flags of `buildguard init`.
type initOptions struct {
	hosts         []string
	all, skill    bool
	check, dryRun bool
	dir           string
}

func parseInit(args []string) (initOptions, error) {
	var o initOptions
	seen := map[string]bool{}
	for i := 0; i < len(args); i++ {
		a := args[i]
		name, value, hasValue := strings.Cut(a, "=")
		takeValue := func() (string, error) {
			if hasValue {
				return value, nil
			}
			if i+1 >= len(args) {
				return "", fmt.Errorf("flag %s needs a value", name)
			}
			i++
			return args[i], nil
		}
		switch {
		case !hasValue && (a == "--mcp" || a == "--all" || a == "--skill" || a == "--check" || a == "--dry-run"):
			if seen[a] {
				return o, fmt.Errorf("flag %s given twice", a)
			}
			seen[a] = true
			switch a {
			case "--mcp":
				o.hosts = append(o.hosts, "claude")
			case "--all":
				o.all = true
			case "--skill":
				o.skill = true
			case "--check":
				o.check = true
			case "--dry-run":
				o.dryRun = true
			}
		case name == "--host":
			v, err := takeValue()
			if err != nil {
				return o, err
			}
			if _, ok := hostconfig.Lookup(v); !ok {
				return o, fmt.Errorf("unknown host %q (hosts: %s)", v, strings.Join(hostconfig.Names(), ", "))
			}
			o.hosts = append(o.hosts, v)
		case name == "--project-dir":
			if o.dir != "" {
				return o, errors.New("flag --project-dir given twice")
			}
			v, err := takeValue()
			if err != nil {
				return o, err
			}
			if v == "" {
				return o, errors.New("--project-dir needs a directory")
			}
			o.dir = v
		default:
			return o, fmt.Errorf("unexpected argument %q", a)
		}
	}
	switch {
	case o.all && len(o.hosts) > 0:
		return o, errors.New("--all and --host (or --mcp) exclude each other")
	case o.check && (o.skill || o.dryRun):
		return o, errors.New("--check only checks; give --skill or --dry-run in a run of their own")
	}
	return o, nil
}

// selectHosts returns the hosts a run works on (docs/decisions.md#D15):
// the named ones, every one with --all, else claude and every detected one.
func selectHosts(o initOptions, env hostconfig.Env) []hostconfig.Host {
	var out []hostconfig.Host
	for _, h := range hostconfig.All() {
		switch {
		case len(o.hosts) > 0:
			if !slices.Contains(o.hosts, h.Name) {
				continue
			}
		case o.all, h.Name == "claude", h.Detected(env):
		default:
			continue
		}
		out = append(out, h)
	}
	return out
}

// runInit handles `buildguard init` (docs/decisions.md#D15). Every file is
// planned first; a refusal (docs/decisions.md#D13) writes nothing at all.
func runInit(args []string, stdout, stderr io.Writer) ExitCode {
	if slices.Contains(args, "--help") || slices.Contains(args, "-h") {
		fmt.Fprintln(stderr, initUsage)
		return ExitOK
	}
	o, err := parseInit(args)
	if err != nil {
		fmt.Fprintf(stderr, "buildguard init: %v\n%s\n", err, initUsage)
		return ExitUsage
	}
	dir := o.dir
	if dir == "" {
		dir = "."
	}
	abs, err := filepath.Abs(dir)
	if err == nil {
		var fi fs.FileInfo
		if fi, err = os.Stat(abs); err == nil && !fi.IsDir() {
			err = errors.New("not a directory")
		}
	}
	if err != nil {
		fmt.Fprintf(stderr, "buildguard init: --project-dir %s must name an existing directory: %v\n", dir, err)
		return ExitUsage
	}
	env := hostconfig.EnvFromOS(abs)
	hosts := selectHosts(o, env)
	for _, h := range hosts {
		if !filepath.IsAbs(h.File(env)) {
			fmt.Fprintf(stderr, "buildguard init: the home directory is not known, so %s's file cannot be found; set HOME (for Codex, or CODEX_HOME)\n", h.Title)
			return ExitUsage
		}
	}
	if o.check {
		return runInitCheck(hosts, len(o.hosts) > 0 || o.all, env, stdout, stderr)
	}
	self, err := os.Executable()
	if err == nil {
		self, err = filepath.EvalSymlinks(self)
	}
	if err != nil {
		fmt.Fprintf(stderr, "buildguard init: finding this binary's path: %v\n", err)
		return ExitFailure
	}

	var changes []hostconfig.Change
	failed := ExitOK
	plan := func(c hostconfig.Change, err error) {
		var r *hostconfig.Refusal
		switch {
		case errors.As(err, &r):
			fmt.Fprintf(stderr, "buildguard init: %v\n", r)
			failed = max(failed, ExitUsage)
		case err != nil:
			fmt.Fprintf(stderr, "buildguard init: %v\n", err)
			failed = max(failed, ExitFailure)
		default:
			changes = append(changes, c)
		}
	}
	for _, h := range hosts {
		plan(hostconfig.Plan(h, env, hostconfig.NewEntry(h, self, abs)))
	}
	if o.skill {
		for _, f := range hostconfig.SkillFiles(abs) {
			plan(hostconfig.PlanSkill(f))
		}
	}
	if failed != ExitOK {
		fmt.Fprintln(stderr, "buildguard init: nothing was written")
		return failed
	}
	for _, c := range changes {
		what := "the buildguard block"
		if c.Host.Name != "" {
			what = fmt.Sprintf("%s (%s)", c.Host.Path(), c.Host.Title)
		}
		switch {
		case !c.Changed():
			fmt.Fprintf(stderr, "buildguard init: %s already has %s; left unchanged\n", c.Path, what)
			continue
		case o.dryRun:
			fmt.Fprint(stdout, c.Diff())
			fmt.Fprintf(stderr, "buildguard init: would write %s to %s\n", what, c.Path)
			continue
		}
		if err := c.Write(); err != nil {
			fmt.Fprintf(stderr, "buildguard init: %v; %s was left unchanged\n", err, c.Path)
			return ExitFailure
		}
		fmt.Fprintf(stderr, "buildguard init: wrote %s to %s\n", what, c.Path)
	}
	if o.dryRun {
		fmt.Fprintln(stderr, "buildguard init: dry run; nothing was written")
		return ExitOK
	}
	for _, c := range changes {
		if c.Host.Name != "" {
			fmt.Fprintf(stderr, "buildguard init: next: %s\n", fmt.Sprintf(c.Host.NextStep, abs))
		}
	}
	return ExitOK
}
