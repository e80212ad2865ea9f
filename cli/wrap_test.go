package cli

import (
	"bytes"
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestParseWrapInlineValues(t *testing.T) {
	t.Parallel()
	spaced, argv, _, err := parseWrap([]string{"--port", "4000", "--owner", "o", "--timeout-ms", "300", "--grace", "2s", "--", "gradle", "--port=1"})
	if err != nil {
		t.Fatal(err)
	}
	inline, _, _, err := parseWrap([]string{"--port=4000", "--owner=o", "--timeout-ms=300", "--grace=2s", "--", "gradle", "--port=1"})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(spaced, inline); diff != "" {
		t.Errorf("--opt=value differs from --opt value (-spaced +inline):\n%s", diff)
	}
	if *inline.Grace != "2s" || !cmp.Equal(argv, []string{"gradle", "--port=1"}) {
		t.Errorf("parsed %+v, argv %q", inline, argv)
	}
	// A value may itself contain "=", and an empty inline value is a value.
	o, _, _, err := parseWrap([]string{"--port-file=a=b", "--owner=", "--", "x"})
	if err != nil || o.PortFile == nil || *o.PortFile != "a=b" || o.Owner == nil || *o.Owner != "" {
		t.Errorf("parsed %+v, %v", o, err)
	}
	for _, args := range [][]string{{"--=x", "--", "y"}, {"--help=1", "--", "y"}, {"--bogus=1", "--", "y"}, {"--port=1"}} {
		if _, _, _, err := parseWrap(args); !errors.As(err, new(usageError)) {
			t.Errorf("parseWrap(%q) = %v, want a usage error", args, err)
		}
	}
}

// Every usage error and every refusal the wrapper prints before it connects
// says what to do next (docs/decisions.md#D8): the line names a flag to pass
// or a thing to do, after a "; " or ": " that follows the reason.
func TestWrapErrorsSayWhatToDoNext(t *testing.T) {
	dir := t.TempDir()
	t.Chdir(dir) // the wrapper's project: its queue goes here (docs/decisions.md#D18)
	for _, tc := range []struct {
		args []string
		code ExitCode
		next string
	}{
		{[]string{"--bogus", "--", "x"}, ExitUsage, "options come before --"},
		{[]string{"--port"}, ExitUsage, "--port needs a value: --port VALUE"},
		{[]string{"--owner", "x"}, ExitUsage, "missing -- before the command: buildguard [options] -- COMMAND"},
		{[]string{"--"}, ExitUsage, "name the build command"},
		{[]string{"--owner", "bad owner", "--", "x"}, ExitUsage, "pass the owner the build printed, or leave --owner out"},
		{[]string{"--owner", "", "--", "x"}, ExitUsage, "pass the owner the build printed, or leave --owner out"},
		{[]string{"--grace", "soon", "--", "x"}, ExitUsage, "--grace needs a duration such as 10s"},
		{[]string{"--port", "", "--", "x"}, ExitFailure, "build refused: invalid port: ; pass --port the agent's port"},
		{[]string{"--port", "0", "--", "x"}, ExitFailure, "build refused: invalid port: 0; pass --port the agent's port"},
		{[]string{"--port-file", "", "--", "x"}, ExitFailure, "build refused: unreadable port file: "},
		{[]string{"--port-file", dir + "/none", "--", "x"}, ExitFailure, "point --port-file at the port file the running agent wrote"},
		{[]string{"--port-file", dir + "/none", "--timeout-ms", "x", "--", "x"}, ExitFailure, "build refused: invalid timeout; pass --timeout-ms a whole number"},
		{[]string{"--port", "4000", "--timeout-ms", "0", "--", "x"}, ExitFailure, "build refused: the timeout must be between 1 and 60000 milliseconds; pass --timeout-ms"},
		{[]string{"--port", "4000", "--transcript", dir + "/no/dir", "--", "x"}, ExitFailure, "cannot create the transcript: open " + dir + "/no/dir: no such file or directory; pass --transcript a file in a writable directory"},
	} {
		var stdout, stderr bytes.Buffer
		code := run(tc.args, &stdout, &stderr)
		if code != tc.code || !strings.Contains(stderr.String(), tc.next) || stdout.Len() != 0 {
			t.Errorf("buildguard %q: exit %d, stderr %q; want exit %d and %q", tc.args, code, stderr.String(), tc.code, tc.next)
		}
		if tc.code == ExitUsage && !strings.HasPrefix(stderr.String(), "Usage: ") {
			t.Errorf("buildguard %q: stderr %q, want the usage line first", tc.args, stderr.String())
		}
	}
}
