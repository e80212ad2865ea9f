//go:build linux

package main

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/sys/unix"
)

// fakeContinuousGradle is a continuous Gradle build that plays the cycle
// init script over the channel buildguard gives it (bash's /dev/tcp): one
// good cycle, then it writes its pid to $1 and waits like Gradle waiting for
// changes.
const fakeContinuousGradle = `#!/bin/bash
for a; do case $a in -Pbuildguard.cycleChannel=*) ch=${a#-Pbuildguard.cycleChannel=} ;; esac; done
port=$(sed -n 's/^port=//p' "$ch")
secret=$(sed -n 's/^secret=//p' "$ch")
exec 3<>"/dev/tcp/127.0.0.1/$port"
echo "buildguard-cycle 1 $secret start" >&3
read -r ans <&3
echo "cycle answered: $ans"
echo "finish ok" >&3
read -r ans <&3
exec 3>&-
echo $$ > "$1.tmp" && mv "$1.tmp" "$1"
exec sleep 300
`

// TestWrapContinuousCycleLinesWhileTerminalIsRaw: a cycle of a continuous
// build ends while the build has the terminal in raw mode (pty), and its
// stderr line still starts at the left margin (docs/decisions.md#D20).
func TestWrapContinuousCycleLinesWhileTerminalIsRaw(t *testing.T) {
	t.Parallel()
	if _, err := exec.LookPath("bash"); err != nil {
		t.Fatalf("this test's fake Gradle needs bash: %v", err)
	}
	bin, agent, ptmx, tty := terminalFixture(t)
	dir := t.TempDir()
	gradle := filepath.Join(dir, "gradle")
	if err := os.WriteFile(gradle, []byte(fakeContinuousGradle), 0o755); err != nil {
		t.Fatal(err)
	}
	pidFile := filepath.Join(dir, "gradle.pid")
	r := startOnTerminal(t, bin, ptmx, tty, nil, "--port-file", agent.PortFile(), "--owner", "raw-cycles", "--continuous", "--",
		gradle, pidFile, "--continuous", "classes")
	r.waitPID(t, pidFile)
	if raw := termios(t, tty); raw.Oflag&unix.OPOST != 0 {
		t.Errorf("the terminal keeps output processing while the build runs; this test needs raw mode")
	}
	r.cmd.Process.Signal(unix.SIGTERM)
	werr := <-r.exited
	_, out := r.closeTerminal(t, tty)
	var ee *exec.ExitError
	if !errors.As(werr, &ee) || ee.ExitCode() != 143 {
		t.Fatalf("buildguard: %v, want exit 143\n%q", werr, out)
	}
	if !strings.Contains(out, "cycle answered: ack 1") {
		t.Errorf("the fake Gradle's cycle was not acknowledged:\n%q", out)
	}
	i := strings.Index(out, "buildguard: cycle 1 ok in ")
	if i < 0 {
		t.Fatalf("terminal shows %q, want the cycle line", out)
	}
	if line, _, _ := strings.Cut(out[i:], "\n"); !strings.HasSuffix(line, "; output released\r") {
		t.Errorf("cycle line written in raw mode does not end with \\r\\n: %q", out[i:])
	}
	if got := agent.Commands(); len(got) != 2 || !strings.HasPrefix(got[0], "BUILD started ") || !strings.HasPrefix(got[1], "BUILD ok ") {
		t.Errorf("agent received %q, want BUILD started then BUILD ok", got)
	}
}
