package cli

import (
	"bytes"
	"errors"
	"flag"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/buildguard/buildguard/service/tools"
)

// spellings are the four spellings of one flag and its value that
// docs/decisions.md#D1 accepts.
func spellings(name, value string) [][]string {
	return [][]string{
		{"--" + name, value}, {"--" + name + "=" + value},
		{"-" + name, value}, {"-" + name + "=" + value},
	}
}

// TestFlagSpellings: every subcommand reads `--name value`, `--name=value`,
// `-name value` and `-name=value` alike (docs/decisions.md#D1).
func TestFlagSpellings(t *testing.T) {
	t.Parallel()
	verify, _ := toolCommand([]string{"verify"})
	for _, sp := range spellings("port", "4000") {
		o, argv, _, err := parseWrap(append(sp, "--", "gradle", "-port=1"))
		if err != nil || o.Port == nil || *o.Port != "4000" || !cmp.Equal(argv, []string{"gradle", "-port=1"}) {
			t.Errorf("wrapper %q: port %v, argv %q, %v", sp, o.Port, argv, err)
		}
		pos, endpoint, _, err := parseToolArgs(verify.CLI, append(append([]string{"A"}, sp...), "B"))
		if err != nil || !cmp.Equal(pos, []string{"A", "B"}) || endpoint["port"] != "4000" {
			t.Errorf("verify %q: operands %q, endpoint %v, %v", sp, pos, endpoint, err)
		}
	}
	for _, sp := range spellings("host", "cursor") {
		o, err := parseInit(append(sp, "-absolute"))
		if err != nil || !cmp.Equal(o.hosts, []string{"cursor"}) || !o.absolute {
			t.Errorf("init %q: %+v, %v", sp, o, err)
		}
	}
	for _, sp := range [][]string{{"-continuous"}, {"--continuous"}} {
		if o, _, _, err := parseWrap(append(sp, "--", "gradle", "-t")); err != nil || !o.Continuous {
			t.Errorf("wrapper %q: %+v, %v", sp, o, err)
		}
	}
}

// TestFlagErrorsAreWordedByEachFront: the flag package's own messages are
// never shown; each front words an unknown flag, a missing value, a flag
// given twice and a switch given a value as its contract does.
func TestFlagErrorsAreWordedByEachFront(t *testing.T) {
	t.Parallel()
	wrap := func(args ...string) error { _, _, _, err := parseWrap(args); return err }
	build, _ := toolCommand([]string{"build"})
	tool := func(args ...string) error { _, _, _, err := parseToolArgs(build.CLI, args); return err }
	initArgs := func(args ...string) error { _, err := parseInit(args); return err }
	for _, c := range []struct {
		err  error
		want string
	}{
		{wrap("--bogus=1", "--", "x"), `unknown option "--bogus=1": options come before --, and everything after -- is the command`},
		{wrap("---port", "1", "--", "x"), `unknown option "---port": options come before --, and everything after -- is the command`},
		{wrap("-port", "1", "gradle", "--", "x"), `unknown option "gradle": options come before --, and everything after -- is the command`},
		{wrap("-owner"), "--owner needs a value: --owner VALUE"},
		{wrap("--continuous=", "--", "gradle", "-t"), "--continuous takes no value: buildguard --continuous -- ./gradlew --continuous classes"},
		{wrap("--port", "1", "--port", "2"), "missing -- before the command: buildguard [options] -- COMMAND [ARG...]"},
		{tool("ok", "--bogus=1"), "unknown flag --bogus"},
		{tool("ok", "-bogus"), "unknown flag -bogus"},
		{tool("ok", "--owner"), "flag --owner needs a value"},
		{tool("ok", "--owner", "a", "-owner=b"), "flag --owner given twice"},
		{tool("ok", "--port", "1", "--port=2"), "flag --port given twice"},
		{initArgs("--all=true"), `unexpected argument "--all=true"`},
		{initArgs("-check", "--check"), "flag --check given twice"},
		{initArgs("--project-dir"), "flag --project-dir needs a value"},
		{initArgs("claude"), `unexpected argument "claude"`},
		{initArgs("--"), `unexpected argument "--"`},
		{initArgs("-help"), `unexpected argument "-help"`},
	} {
		if c.err == nil || c.err.Error() != c.want {
			t.Errorf("error %v, want %q", c.err, c.want)
		}
	}
	// The wrapper's own errors are usage errors: the usage line precedes them.
	if err := wrap("-bogus", "--", "x"); !errors.As(err, new(usageError)) {
		t.Errorf("wrapper: %v is not a usageError", err)
	}
}

// TestOperandsAfterDashes: after `--` every argument is an operand, one
// that looks like a flag or asks for help too; before it, a subcommand
// that takes operands takes them anywhere among its flags.
func TestOperandsAfterDashes(t *testing.T) {
	t.Parallel()
	verify, _ := toolCommand([]string{"verify"})
	pos, endpoint, _, err := parseToolArgs(verify.CLI, []string{"A", "--port", "1", "--", "--help", "-port=2"})
	if err != nil || !cmp.Equal(pos, []string{"A", "--help", "-port=2"}) || endpoint["port"] != "1" {
		t.Errorf("operands %q, endpoint %v, %v", pos, endpoint, err)
	}
	// --help after -- is the class name, not a request for help.
	var stdout, stderr bytes.Buffer
	if code := run([]string{"diagnose", "--timeout-ms", "1", "--", "--help"}, &stdout, &stderr); code != ExitUsage || strings.HasPrefix(stderr.String(), "Usage:") {
		t.Errorf("diagnose -- --help: exit %d, stderr %q; want the argument error, exit 2", code, stderr.String())
	}
	// A value is taken whatever it is, `--` and `-h` too.
	o, argv, help, err := parseWrap([]string{"--owner", "--", "-transcript", "-h", "--", "x"})
	if err != nil || help || *o.Owner != "--" || *o.Transcript != "-h" || !cmp.Equal(argv, []string{"x"}) {
		t.Errorf("parsed %+v, argv %q, help %v, %v", o, argv, help, err)
	}
}

// TestHelpWhereAFlagMayStand: -h and --help answer with the usage wherever
// a flag may stand, in every spelling the grammar reads, and the parse
// stops at the first of help and an error.
func TestHelpWhereAFlagMayStand(t *testing.T) {
	t.Parallel()
	for _, args := range [][]string{{"-help", "--", "x"}, {"--h"}, {"--port", "1", "-h", "--bogus"}} {
		if _, _, help, err := parseWrap(args); !help || err != nil {
			t.Errorf("wrapper %q: help %v, %v", args, help, err)
		}
	}
	status, _ := toolCommand([]string{"status"})
	for _, args := range [][]string{{"-h"}, {"--port", "1", "-help"}} {
		if _, _, _, err := parseToolArgs(status.CLI, args); !errors.Is(err, flag.ErrHelp) {
			t.Errorf("status %q: %v, want help", args, err)
		}
	}
	if _, _, _, err := parseToolArgs(status.CLI, []string{"--bogus", "--help"}); err == nil || err.Error() != "unknown flag --bogus" {
		t.Errorf("status --bogus --help: %v, want the unknown flag", err)
	}
	for _, args := range [][]string{{"-h"}, {"-help"}, {"--h"}} {
		var stdout, stderr bytes.Buffer
		if code := run(args, &stdout, &stderr); code != ExitOK || stdout.Len() != 0 || !strings.HasPrefix(stderr.String(), "Usage:") {
			t.Errorf("%q: exit %d, stderr %q", args, code, stderr.String())
		}
	}
}

// TestEveryToolFlagParses: every tool subcommand's own flags are read with
// the endpoint flags, in the `--name=value` spelling too.
func TestEveryToolFlagParses(t *testing.T) {
	t.Parallel()
	for _, tool := range tools.All() {
		for name := range tool.CLI.Flags {
			_, _, own, err := parseToolArgs(tool.CLI, []string{name + "=v"})
			if err != nil || own[tool.CLI.Flags[name]] != "v" {
				t.Errorf("%s %s=v: own %v, %v", tool.CLI.Command, name, own, err)
			}
		}
	}
}

// TestVersionReadsTheGrammar: `version` takes no arguments and answers -h
// and --help as every form does.
func TestVersionReadsTheGrammar(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		args   []string
		code   ExitCode
		stderr string
	}{
		{[]string{"version", "-h"}, ExitOK, "Usage: buildguard version\n"},
		{[]string{"--version", "-help"}, ExitOK, "Usage: buildguard version\n"},
		{[]string{"version", "x"}, ExitUsage, "buildguard: version takes no arguments\nUsage: buildguard version\n"},
		{[]string{"version", "--", "--help"}, ExitUsage, "buildguard: version takes no arguments\nUsage: buildguard version\n"},
		{[]string{"version", "--bogus", "--help"}, ExitUsage, "buildguard: version takes no arguments\nUsage: buildguard version\n"},
	} {
		var stdout, stderr bytes.Buffer
		if code := run(c.args, &stdout, &stderr); code != c.code || stdout.Len() != 0 || stderr.String() != c.stderr {
			t.Errorf("%q: exit %d, stdout %q, stderr %q; want exit %d and %q", c.args, code, stdout.String(), stderr.String(), c.code, c.stderr)
		}
	}
}
