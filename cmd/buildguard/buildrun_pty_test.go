//go:build linux

package main

import (
	"bytes"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/creack/pty"

	"github.com/buildguard/buildguard/harness/fakeagent"
)

// TestBuildRunStatusLineOnTerminal: with stderr on a terminal, `build run`
// shows one status line redrawn in place (the build, its time, the latest
// output line), clears it before the result, then prints the diagnostics
// coloured, or plain under NO_COLOR; stdout carries only the JSON
// (docs/safe-build.md#10).
func TestBuildRunStatusLineOnTerminal(t *testing.T) {
	t.Parallel()
	bin, err := exec.LookPath("buildguard")
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name   string
		env    []string
		colour bool
	}{{"colour", nil, true}, {"NO_COLOR", []string{"NO_COLOR=1"}, false}} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			agent := fakeagent.NewServer(t)
			script := `echo compiling the project; sleep 1.2; echo "$PWD/src/B.java:3: error: cannot find symbol" >&2; exit 1`
			cfg := `{"builds": {"slow": {"command": ["sh", "-c", ` + jsonString(script) + `]}}}`
			if err := os.WriteFile(filepath.Join(dir, ".buildguard.json"), []byte(cfg), 0o644); err != nil {
				t.Fatal(err)
			}
			ptmx, tty, err := pty.Open()
			if err != nil {
				t.Fatal(err)
			}
			defer ptmx.Close()
			var stdout bytes.Buffer
			cmd := exec.Command(bin, "build", "run", "slow", "--port-file", agent.PortFile())
			cmd.Dir = dir
			cmd.Env = append(os.Environ(), tc.env...)
			cmd.Stdin, cmd.Stdout, cmd.Stderr = tty, &stdout, tty
			copied := make(chan struct{})
			var screen bytes.Buffer
			go func() {
				io.Copy(&screen, ptmx)
				close(copied)
			}()
			err = cmd.Run()
			tty.Close()
			<-copied
			if code := cmd.ProcessState.ExitCode(); code != 1 {
				t.Fatalf("exit %d (%v), want 1; terminal:\n%q", code, err, screen.String())
			}
			shown := screen.String()
			status := strings.Index(shown, "\r\x1b[2Kbuildguard: building slow · ")
			latest := strings.Index(shown, " · compiling the project")
			clear := strings.LastIndex(shown, "\r\x1b[2K")
			summary := strings.Index(shown, `buildguard: build "slow" failed: 1 error, 0 warnings`)
			if status < 0 || latest < 0 || summary < 0 || clear > summary {
				t.Fatalf("status line at %d (latest line at %d), cleared at %d, summary at %d:\n%q\nstdout %s", status, latest, clear, summary, shown, stdout.String())
			}
			if strings.Count(shown[:summary], "\r\x1b[2Kbuildguard: building slow") < 2 {
				t.Errorf("the status line was not redrawn while the build ran:\n%q", shown)
			}
			plain := "  src/B.java:3: error: cannot find symbol"
			painted := "  \x1b[1msrc/B.java:3: \x1b[0m\x1b[31m\x1b[1merror\x1b[0m: cannot find symbol"
			if want, other := painted, plain; !tc.colour {
				if !strings.Contains(shown, other) || strings.Contains(shown, "\x1b[31m") {
					t.Errorf("NO_COLOR: want %q and no colour in:\n%q", other, shown)
				}
			} else if !strings.Contains(shown, want) {
				t.Errorf("want %q in:\n%q", want, shown)
			}
			if out := stdout.String(); !strings.HasPrefix(out, `{"outcome":"failed",`) || !strings.Contains(out, `"build":"slow"`) || strings.Count(out, "\n") != 1 || strings.Contains(out, "\x1b") {
				t.Errorf("stdout %q, want only the JSON line", out)
			}
		})
	}
}

func jsonString(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for _, r := range s {
		switch r {
		case '"', '\\':
			b.WriteByte('\\')
		}
		b.WriteRune(r)
	}
	b.WriteByte('"')
	return b.String()
}
