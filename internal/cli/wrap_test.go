package cli

import (
	"errors"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func TestParseWrapInlineValues(t *testing.T) {
	t.Parallel()
	spaced, _, err := parseWrap([]string{"--port", "4000", "--owner", "o", "--timeout-ms", "300", "--grace", "2s", "--", "gradle", "--port=1"})
	if err != nil {
		t.Fatal(err)
	}
	inline, _, err := parseWrap([]string{"--port=4000", "--owner=o", "--timeout-ms=300", "--grace=2s", "--", "gradle", "--port=1"})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(spaced, inline, cmp.AllowUnexported(wrapOptions{})); diff != "" {
		t.Errorf("--opt=value differs from --opt value (-spaced +inline):\n%s", diff)
	}
	if inline.grace != 2*time.Second || !cmp.Equal(inline.argv, []string{"gradle", "--port=1"}) {
		t.Errorf("parsed %+v", inline)
	}
	// A value may itself contain "=", and an empty inline value is a value.
	o, _, err := parseWrap([]string{"--port-file=a=b", "--owner=", "--", "x"})
	if err != nil || o.portFile != "a=b" || o.owner != "" || !o.ownerSet || !o.portFileSet {
		t.Errorf("parsed %+v, %v", o, err)
	}
	for _, args := range [][]string{{"--=x", "--", "y"}, {"--help=1", "--", "y"}, {"--bogus=1", "--", "y"}, {"--port=1"}} {
		if _, _, err := parseWrap(args); !errors.Is(err, errUsage) {
			t.Errorf("parseWrap(%q) = %v, want a usage error", args, err)
		}
	}
}
