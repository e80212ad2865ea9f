//go:build linux

package main

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/buildguard/buildguard/internal/testsupport/wait"
)

// fakeContinuousGradle is a continuous Gradle build that plays the cycle
// init script over the channel buildguard gives it (bash's /dev/tcp). It
// writes its pid to $1/gradle.pid, runs one good cycle, waits (at most
// 60 s) until $1/cycle2 exists, runs a second good cycle, then waits like
// Gradle waiting for changes.
const fakeContinuousGradle = `#!/bin/bash
for a; do case $a in -Pbuildguard.cycleChannel=*) ch=${a#-Pbuildguard.cycleChannel=} ;; esac; done
port=$(sed -n 's/^port=//p' "$ch")
secret=$(sed -n 's/^secret=//p' "$ch")
cycle() {
	exec 3<>"/dev/tcp/127.0.0.1/$port"
	echo "buildguard-cycle 1 $secret start" >&3
	read -r ans <&3
	echo "cycle answered: $ans"
	echo "finish ok" >&3
	read -r ans <&3
	exec 3>&-
}
echo $$ > "$1/gradle.pid.tmp" && mv "$1/gradle.pid.tmp" "$1/gradle.pid"
cycle
i=0
while [ ! -e "$1/cycle2" ] && [ $i -lt 1200 ]; do sleep 0.05; i=$((i+1)); done
cycle
exec sleep 300
`

// TestWrapContinuousLinesWhileTerminalIsRaw: the lines buildguard writes
// while a continuous build holds the terminal in raw mode (pty) start at
// the left margin (docs/decisions.md#D20): a cycle's end, and the place of a
// cycle that waits for its turn behind another build of the project
// (docs/decisions.md#D18), and the line saying its turn came.
func TestWrapContinuousLinesWhileTerminalIsRaw(t *testing.T) {
	t.Parallel()
	if _, err := exec.LookPath("bash"); err != nil {
		t.Fatalf("this test's fake Gradle needs bash: %v", err)
	}
	bin, agent, ptmx, tty := terminalFixture(t)
	ctl := t.TempDir()
	gradle := filepath.Join(ctl, "gradle")
	if err := os.WriteFile(gradle, []byte(fakeContinuousGradle), 0o755); err != nil {
		t.Fatal(err)
	}
	r := startOnTerminal(t, bin, ptmx, tty, nil, "--port-file", agent.PortFile(), "--owner", "raw-cycles", "--continuous", "--",
		gradle, ctl, "--continuous", "classes")
	r.waitPID(t, filepath.Join(ctl, "gradle.pid"))
	r.waitScreen(t, "buildguard: cycle 1 ok in ")
	if raw := termios(t, tty); raw.Oflag&unix.OPOST != 0 {
		t.Errorf("the terminal keeps output processing while the build runs; this test needs raw mode")
	}

	// Another build of the project takes the turn between the cycles; the
	// second cycle waits behind it until it ends.
	ahead := exec.Command(bin, "--port-file", agent.PortFile(), "--owner", "ahead", "--",
		"sh", "-c", `touch running; i=0; while [ ! -e go ] && [ $i -lt 1200 ]; do sleep 0.05; i=$((i+1)); done`)
	ahead.Dir = r.dir
	var aheadErr bytes.Buffer
	ahead.Stderr = &aheadErr
	if err := ahead.Start(); err != nil {
		t.Fatal(err)
	}
	aheadDone := make(chan error, 1)
	go func() { aheadDone <- ahead.Wait() }()
	defer func() {
		os.WriteFile(filepath.Join(r.dir, "go"), nil, 0o644)
		<-aheadDone
	}()
	wait.For(t, 30*time.Second, "the other build runs", func() bool {
		_, err := os.Stat(filepath.Join(r.dir, "running"))
		return err == nil
	})
	if err := os.WriteFile(filepath.Join(ctl, "cycle2"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	r.waitScreen(t, "buildguard: waiting in the project's build queue at place 2")
	if err := os.WriteFile(filepath.Join(r.dir, "go"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := <-aheadDone; err != nil {
		t.Errorf("the other build: %v\n%s", err, aheadErr.String())
	}
	aheadDone <- nil // for the deferred cleanup
	r.waitScreen(t, "buildguard: cycle 2 ok in ")

	r.cmd.Process.Signal(unix.SIGTERM)
	werr := <-r.exited
	_, out := r.closeTerminal(t, tty)
	var ee *exec.ExitError
	if !errors.As(werr, &ee) || ee.ExitCode() != 143 {
		t.Fatalf("buildguard: %v, want exit 143\n%q", werr, out)
	}
	for _, want := range []string{"cycle answered: ack 1", "cycle answered: ack 2"} {
		if !strings.Contains(out, want) {
			t.Errorf("the fake Gradle's cycle was not acknowledged (%q):\n%q", want, out)
		}
	}
	for _, want := range []string{
		"buildguard: cycle 1 ok in ", "buildguard: cycle 2 ok in ",
		"buildguard: waiting in the project's build queue at place 2", "buildguard: the build's turn came after ",
	} {
		i := strings.Index(out, want)
		if i < 0 {
			t.Errorf("terminal shows %q, want a line starting %q", out, want)
			continue
		}
		if line, _, _ := strings.Cut(out[i:], "\n"); !strings.HasSuffix(line, "\r") {
			t.Errorf("line written in raw mode does not end with \\r\\n: %q", out[i:])
		}
	}
	got := agent.Commands()
	var seq []string
	for _, c := range got {
		f := strings.Fields(c)
		if len(f) >= 2 && f[0] == "BUILD" {
			seq = append(seq, f[1])
		}
	}
	if strings.Join(seq, ",") != "started,ok,started,ok,started,ok" {
		t.Errorf("agent received %q, want three builds started then ok, one after the other", got)
	}
}
