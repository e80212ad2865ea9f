//go:build unix

package integrations

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestCmdTwins checks the Windows shims statically, as there is no cmd.exe
// here: CRLF line endings (cmd.exe mis-parses labels and goto in LF-only batch
// files), every label that a goto or call names exists, and the same options
// and refusals as the POSIX shims.
func TestCmdTwins(t *testing.T) {
	t.Parallel()
	label := regexp.MustCompile(`(?mi)^:([a-z]+)\r$`)
	jump := regexp.MustCompile(`(?i)\b(?:goto|call) :([a-z]+)`)
	for _, sh := range shims {
		t.Run(sh.name+".cmd", func(t *testing.T) {
			t.Parallel()
			b, err := os.ReadFile(filepath.Join("bin", sh.name+".cmd"))
			if err != nil {
				t.Fatal(err)
			}
			text := string(b)
			if n := strings.Count(text, "\n"); n == 0 || n != strings.Count(text, "\r\n") {
				t.Errorf("%d of %d line endings are CRLF, want all", strings.Count(text, "\r\n"), n)
			}
			labels := map[string]bool{}
			for _, m := range label.FindAllStringSubmatch(text, -1) {
				labels[strings.ToLower(m[1])] = true
			}
			for _, m := range jump.FindAllStringSubmatch(text, -1) {
				if name := strings.ToLower(m[1]); name != "eof" && !labels[name] {
					t.Errorf("goto/call :%s has no label", m[1])
				}
			}
			want := []string{"--port", "--port-file", "--owner", "--timeout-ms", "--grace", "--transcript",
				"BUILDGUARD_SAFE_BUILD_ACTIVE", "--continuous", `\` + sh.wrapper}
			if sh.tool == "gradle" {
				want = append(want, `"-t"`, "bootRun")
			} else {
				want = append(want, "spring-boot:run", "jetty:run", "exec:java")
			}
			for _, w := range want {
				if !strings.Contains(text, w) {
					t.Errorf("does not mention %q", w)
				}
			}
		})
	}
}
