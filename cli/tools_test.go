package cli

import (
	"strings"
	"testing"

	"github.com/buildguard/buildguard/buildguard"
	"github.com/buildguard/buildguard/service/tools"
)

// TestToolArgumentErrorsNameFlags: a tool subcommand's argument error names
// the flag the user typed, not the MCP argument behind it
// (docs/decisions.md#D2); it is a usage error, exit 2.
func TestToolArgumentErrorsNameFlags(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"status", "--port", " "}, "buildguard status: --port must not be blank\n"},
		{[]string{"scan", "--port-file", ""}, "buildguard scan: --port-file must not be blank\n"},
		{[]string{"pending", "--timeout-ms", "soon"}, "buildguard pending: --timeout-ms must be an integer string between 1 and 60000\n"},
		{[]string{"doctor", "--project-dir", "/nonexistent/project"}, "buildguard doctor: --project-dir must name an existing directory\n"},
		{[]string{"build", "run", "--hybris-home", " "}, "buildguard build run: --hybris-home must not be blank\n"},
	} {
		var stdout, stderr strings.Builder
		code := run(c.args, &stdout, &stderr)
		if code != ExitUsage || !strings.HasPrefix(stderr.String(), c.want) || stdout.Len() != 0 {
			t.Errorf("%q: exit %d, stdout %q, stderr %q; want exit 2 and %q", c.args, code, stdout.String(), stderr.String(), c.want)
		}
		for _, arg := range []string{"port ", "portFile", "timeoutMs", "projectDir", "hybrisHome"} {
			if strings.Contains(strings.SplitN(stderr.String(), "\n", 2)[0], " "+arg) {
				t.Errorf("%q: names the MCP argument %s: %q", c.args, arg, stderr.String())
			}
		}
	}
}

// TestToolResultsNameFlags: where a tool subcommand's answer says which
// setting to change, it names the flags the user types, never the MCP
// arguments an MCP client reads in the same answer (docs/decisions.md#D2).
func TestToolResultsNameFlags(t *testing.T) {
	t.Parallel()
	var stdout, stderr strings.Builder
	code := run([]string{"status", "--project-dir", t.TempDir()}, &stdout, &stderr)
	want := `{"attached":false,"reason":"no port file found; run the app with the Reclazz agent, or pass --port/--port-file"}` + "\n"
	if code != ExitOK || stdout.String() != want {
		t.Errorf("status: exit %d, stdout %q, stderr %q; want exit 0 and %q", code, stdout.String(), stderr.String(), want)
	}
}

// TestAdviceNamesNoToolArgument: what the command line tells its users to
// do names flags only, never an MCP tool argument.
func TestAdviceNamesNoToolArgument(t *testing.T) {
	t.Parallel()
	for name, a := range map[string]buildguard.Advice{"wrapper": wrapAdvice, "build run": buildRunAdvice, "tools": toolAdvice} {
		for fix, words := range a {
			for _, arg := range []string{"portFile", "projectDir", "timeoutMs", "hybrisHome", "port/portFile"} {
				if strings.Contains(words, arg) {
					t.Errorf("%s advice for fix %d names the tool argument %s: %q", name, fix, arg, words)
				}
			}
		}
	}
}

// TestFlagWordsFollowTheErrorsStructure: an argument error is worded from
// the argument it names and its rule, never by cutting its text.
func TestFlagWordsFollowTheErrorsStructure(t *testing.T) {
	t.Parallel()
	e := &tools.ArgError{Message: "the port given must not be blank", Arg: "port", Rule: "must not be blank"}
	if got := flagWords(tools.CLIForm{}, e); got != "--port must not be blank" {
		t.Errorf("flagWords = %q, want %q", got, "--port must not be blank")
	}
	e = &tools.ArgError{Message: "owner is not a token", Arg: "owner", Rule: "is not a token"}
	if got := flagWords(tools.CLIForm{Flags: map[string]string{"--owner": "owner"}}, e); got != "--owner is not a token" {
		t.Errorf("flagWords = %q, want %q", got, "--owner is not a token")
	}
}
