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
	"time"

	"github.com/buildguard/buildguard/service/hostconfig"
	"github.com/buildguard/buildguard/service/tools"
)

const initUsage = `Usage: buildguard init [--host NAME]... [--all] [--skill] [--check] [--dry-run] [--absolute] [--project-dir DIR]
       buildguard init --mcp [--project-dir DIR]          (the same as --host claude)
       either form also takes [--answer-within DURATION]

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
  --absolute  write this machine's paths into the project's files too (not for committing)
  --answer-within DURATION
              add --answer-within DURATION (1s to 10m) to each entry's args: a build still
              running then answers running, and the model resumes it (docs/hosts.md#1)
Project files get "command": "buildguard" (found on PATH) and no path of this machine;
user files (codex, windsurf) get this binary's path and --project-dir DIR.
DIR defaults to the working directory.`

// initOptions are the parsed flags of `buildguard init`.
type initOptions struct {
	hosts         []string
	all, skill    bool
	check, dryRun bool
	absolute      bool
	dir           string
	// answerWithin is --answer-within, written into each entry's args; 0
	// when not given.
	answerWithin time.Duration
}

// initMessages words the parse errors of `buildguard init`: anything but
// one of its flags is an unexpected argument. runInit answers --help and -h
// before the parse; the other spellings of help are unexpected too.
var initMessages = flagMessages{
	unknown: unexpectedArgument,
	missing: func(flag string) error { return fmt.Errorf("flag %s needs a value", flag) },
	twice:   func(flag string) error { return fmt.Errorf("flag %s given twice", flag) },
	valued:  unexpectedArgument,
	help:    unexpectedArgument,
}

func unexpectedArgument(tok string) error { return fmt.Errorf("unexpected argument %q", tok) }

// parseInit reads the flags of `buildguard init` by the grammar of
// docs/decisions.md#D1: --host may be repeated, every other flag is given
// at most once.
func parseInit(args []string) (initOptions, error) {
	var o initOptions
	s := newFlagSet(noOperands, initMessages)
	for flag, on := range map[string]func(){
		"--mcp": func() { o.hosts = append(o.hosts, "claude") }, "--all": func() { o.all = true },
		"--skill": func() { o.skill = true }, "--check": func() { o.check = true },
		"--dry-run": func() { o.dryRun = true }, "--absolute": func() { o.absolute = true },
	} {
		s.onOff(flag, false, on)
	}
	s.value("--host", true, func(v string) error {
		if _, ok := hostconfig.Lookup(v); !ok {
			return fmt.Errorf("unknown host %q (hosts: %s)", v, strings.Join(hostconfig.Names(), ", "))
		}
		o.hosts = append(o.hosts, v)
		return nil
	})
	s.value("--project-dir", false, func(v string) error {
		if v == "" {
			return errors.New("--project-dir needs a directory")
		}
		o.dir = v
		return nil
	})
	s.value("--answer-within", false, func(v string) (err error) {
		o.answerWithin, err = parseAnswerWithin(v)
		return err
	})
	if _, _, err := s.parse(args); err != nil {
		return o, err
	}
	switch {
	case o.all && len(o.hosts) > 0:
		return o, errors.New("--all and --host (or --mcp) exclude each other")
	case o.check && (o.skill || o.dryRun || o.absolute):
		return o, errors.New("--check only checks; give --skill, --dry-run or --absolute in a run of their own")
	case o.check && o.answerWithin > 0:
		return o, errors.New("--check only checks; give --answer-within in a run of its own")
	}
	return o, nil
}

// parseAnswerWithin reads the value of init's --answer-within by the
// grammar and bounds of `mcp --answer-within` (docs/mcp-server.md#1.1): a
// Go duration from tools.MinAnswerWithin to tools.MaxAnswerWithin.
func parseAnswerWithin(v string) (time.Duration, error) {
	d, err := time.ParseDuration(v)
	if err != nil || d < tools.MinAnswerWithin || d > tools.MaxAnswerWithin {
		return 0, fmt.Errorf("--answer-within needs a duration from 1s to 10m, such as 50s; got %q", v)
	}
	return d, nil
}

// runInit handles `buildguard init` (docs/decisions.md#D15): it parses,
// words what only the command line knows into one hostconfig.Request, and
// hands it to initCheck or initHosts.
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
	dir, err := initProjectDir(o.dir)
	if err != nil {
		fmt.Fprintf(stderr, "buildguard init: %v\n", err)
		return ExitUsage
	}
	req := hostconfig.Request{Env: hostconfig.EnvFromOS(dir), Names: o.hosts, All: o.all, Skill: o.skill}
	if o.check {
		return runInitCheck(req, stdout, stderr)
	}
	self, err := entryCommand(os.Args[0])
	if err != nil {
		fmt.Fprintf(stderr, "buildguard init: finding this binary's path: %v\n", err)
		return ExitFailure
	}
	timeout, why := buildCallTimeout(dir)
	req.Entry = hostconfig.EntryOptions{Self: self, Absolute: o.absolute, ToolTimeout: timeout, TimeoutNote: why, AnswerWithin: o.answerWithin}
	return initHosts(req, o.dryRun, stdout, stderr)
}

// initProjectDir returns dir (default: the working directory) made
// absolute, or why it is not an existing directory.
func initProjectDir(dir string) (string, error) {
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
		return "", fmt.Errorf("--project-dir %s must name an existing directory: %w", dir, err)
	}
	return abs, nil
}

// initHosts has hostconfig decide and plan every file of the run
// (hostconfig.PlanRun, docs/hosts.md#1), prints the notes and each
// refusal, and then either prints the plan as a diff (dryRun) or writes it
// (hostconfig.Write) and says of each file, in order, what became of it.
// A host whose file cannot be found is a usage error (exit 2); so is a
// portable entry with no buildguard on PATH, with what to do; any refusal
// (docs/decisions.md#D13) makes the run write nothing (exit 2, or 1 when
// a file could not be read). A write that still fails (a full disk, a
// file changed under us) is exit 1, with which files were written and
// which were not.
func initHosts(req hostconfig.Request, dryRun bool, stdout, stderr io.Writer) ExitCode {
	p := hostconfig.PlanRun(req)
	for _, n := range p.Notes {
		fmt.Fprintf(stderr, "buildguard init: note: %s\n", n)
	}
	code := ExitOK
	switch self := req.Entry.Self; {
	case errors.Is(p.Err, hostconfig.ErrNotOnPath):
		fmt.Fprintf(stderr, "buildguard init: %s is not on PATH (%s), so a host would not start the entry %q of the project's files. "+
			"Install buildguard in a directory on PATH (for example: ln -s %s /usr/local/bin/buildguard) and run init again, "+
			"or run buildguard init --absolute to write this machine's path %s (an entry for this machine only, not for committing)\n",
			hostconfig.Command, hostconfig.ShortPATH(os.Getenv("PATH")), hostconfig.Command+" mcp", self, self)
		code = ExitUsage
	case p.Err != nil:
		fmt.Fprintf(stderr, "buildguard init: %v\n", p.Err)
		return ExitUsage
	}
	for _, err := range p.Errs {
		fmt.Fprintf(stderr, "buildguard init: %v\n", err)
		if _, refused := errors.AsType[*hostconfig.Refusal](err); refused {
			code = max(code, ExitUsage)
		} else {
			code = max(code, ExitFailure)
		}
	}
	if code != ExitOK {
		fmt.Fprintln(stderr, "buildguard init: nothing was written")
		return code
	}
	done, err := len(p.Changes), error(nil)
	if !dryRun {
		done, err = hostconfig.Write(p.Changes)
	}
	var written, notWritten []string
	for i, c := range p.Changes {
		switch {
		case i > done:
			if c.Changed() {
				notWritten = append(notWritten, c.Path)
			}
			continue
		case !c.Changed():
			fmt.Fprintf(stderr, "buildguard init: %s already has %s; left unchanged\n", c.Path, c.Describe())
			continue
		case dryRun:
			fmt.Fprint(stdout, c.Diff())
		}
		for _, n := range c.Notes {
			fmt.Fprintf(stderr, "buildguard init: note: %s: %s\n", c.Path, n)
		}
		switch {
		case dryRun:
			fmt.Fprintf(stderr, "buildguard init: would write %s to %s\n", c.Describe(), c.Path)
		case i == done:
			fmt.Fprintf(stderr, "buildguard init: %v; %s was left unchanged\n", err, c.Path)
			notWritten = append(notWritten, c.Path)
		default:
			written = append(written, c.Path)
			fmt.Fprintf(stderr, "buildguard init: wrote %s to %s\n", c.Describe(), c.Path)
		}
	}
	switch {
	case dryRun:
		fmt.Fprintln(stderr, "buildguard init: dry run; nothing was written")
		return ExitOK
	case err != nil:
		fmt.Fprintf(stderr, "buildguard init: written: %s; not written: %s\n", orNone(written), orNone(notWritten))
		return ExitFailure
	}
	for _, c := range p.Changes {
		for _, h := range c.Hosts {
			fmt.Fprintf(stderr, "buildguard init: next: %s\n", fmt.Sprintf(h.NextStep, req.Env.ProjectDir))
		}
	}
	return ExitOK
}

func orNone(paths []string) string {
	if len(paths) == 0 {
		return "none"
	}
	return strings.Join(paths, ", ")
}
