package cli

import (
	"bytes"
	"strings"
	"testing"
)

// Every form answers --help with its usage on stderr, nothing on stdout, and
// exit 0 (docs/decisions.md#D1); `mcp --help` with another argument is a usage error.
func TestEveryFormAnswersHelp(t *testing.T) {
	t.Parallel()
	forms := [][]string{
		{"--help"}, {"help"}, {"--port", "1", "--help"}, {"mcp", "--help"}, {"init", "--help"}, {"version", "--help"},
		{"status", "--help"}, {"doctor", "--help"}, {"scan", "--help"}, {"pending", "--help"}, {"diagnose", "--help"},
		{"verify", "--help"}, {"verify-batch", "--help"}, {"reload", "--help"}, {"build", "--help"},
		{"verify", "A", "--help"}, {"build", "ok", "--owner", "o", "--help"},
	}
	for _, args := range forms {
		var stdout, stderr bytes.Buffer
		code := run(args, &stdout, &stderr)
		if code != ExitOK || stdout.Len() != 0 || !strings.HasPrefix(stderr.String(), "Usage:") {
			t.Errorf("%q: exit %d, stdout %q, stderr %q", args, code, stdout.String(), stderr.String())
		}
	}
	var stdout, stderr bytes.Buffer
	if code := run([]string{"mcp", "--help", "--port-file", "x"}, &stdout, &stderr); code != ExitUsage || stdout.Len() != 0 {
		t.Errorf("mcp --help with another argument: exit %d, stdout %q", code, stdout.String())
	}
}
