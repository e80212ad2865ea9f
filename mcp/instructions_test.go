package mcp

import (
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/buildguard/buildguard/service/tools"
)

// TestInstructionsFitTheHosts: Claude Code cuts a server's instructions and
// each tool's description at 2,048 characters, and the instructions of
// every server share one block (docs/hosts.md#9): the instructions fit, the
// one call and the safe loop come in order within their first 1,000
// characters, and every tool's description fits.
func TestInstructionsFitTheHosts(t *testing.T) {
	t.Parallel()
	const hostCut, loopWithin = 2048, 1000 // characters
	if n := utf8.RuneCountInString(Instructions); n > hostCut {
		t.Errorf("the instructions take %d characters, more than %d", n, hostCut)
	}
	head := string([]rune(Instructions)[:min(loopWithin, utf8.RuneCountInString(Instructions))])
	last := -1
	for _, step := range []string{
		"reclazz_safe_build", "changedClasses.allApplied true", "read diagnostics", // the one call
		"reclazz_doctor", "started", "compile", "ok", "failed", "reclazz_verify", "exercise the application", // the safe loop
	} {
		i := strings.Index(head[last+1:], step)
		if i < 0 {
			t.Fatalf("the first %d characters of the instructions lack %q after position %d: %q", loopWithin, step, last, head)
		}
		last += 1 + i
	}
	for _, def := range tools.Definitions() {
		if n := utf8.RuneCountInString(def.Description); n > hostCut {
			t.Errorf("%s: its description takes %d characters, more than %d", def.Name, n, hostCut)
		}
	}
}

// TestInstructionsNameEveryWayALongBuildAnswers: the instructions say how
// each kind of client gets a long build's result (docs/safe-build.md#13,
// docs/safe-build.md#14, docs/decisions.md#D17): the 2026-07-28 extension,
// the 2025-11-25 task parameter, and a call that answers running and is
// resumed by its buildId.
func TestInstructionsNameEveryWayALongBuildAnswers(t *testing.T) {
	t.Parallel()
	for _, want := range []string{
		"io.modelcontextprotocol/tasks", "2026-07-28", // the extension
		"task parameter in a 2025-11-25 tools/call", // SEP-1686
		"answerWithinMs", "outcome running", "resume set to that buildId", // answering before a host's deadline
	} {
		if !strings.Contains(Instructions, want) {
			t.Errorf("the instructions lack %q:\n%s", want, Instructions)
		}
	}
}
