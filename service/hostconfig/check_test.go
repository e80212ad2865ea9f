package hostconfig

import (
	"strings"
	"testing"
)

// A failing server's reason is the line before its usage text, without
// control characters, and cut to a readable length.
func TestServerReason(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		"buildguard mcp: unexpected argument \"--x\"\nUsage: buildguard mcp [--project-dir PATH]\n  --project-dir  the project\n": `buildguard mcp: unexpected argument "--x"`,
		"Usage: tool\n":          "Usage: tool",
		"a\nb\n\n":               "b",
		"\x1b[31mred\x1b[0m\a\n": "[31mred[0m",
		strings.Repeat("x", 400): strings.Repeat("x", 300) + "…",
	} {
		if got := serverReason(in); got != want {
			t.Errorf("serverReason(%q) = %q, want %q", in, got, want)
		}
	}
}
