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

	"github.com/buildguard/buildguard/agentproto/agenttest"
	"github.com/creack/pty"
	"golang.org/x/sys/unix"
)

// TestWrapUnderTerminal runs the real command with a pty as the user's
// terminal (stdin, stdout and stderr): the build sees a terminal of the same
// size, its colour sequences arrive intact, and the terminal is restored.
func TestWrapUnderTerminal(t *testing.T) {
	t.Parallel()
	bin, err := exec.LookPath("buildguard") // installed by testscript.Main
	if err != nil {
		t.Fatal(err)
	}
	agent := agenttest.NewServer(t)
	ptmx, tty, err := pty.Open()
	if err != nil {
		t.Fatal(err)
	}
	defer ptmx.Close()
	if err := pty.Setsize(ptmx, &pty.Winsize{Rows: 30, Cols: 100}); err != nil {
		t.Fatal(err)
	}
	before, err := unix.IoctlGetTermios(int(tty.Fd()), unix.TCGETS)
	if err != nil {
		t.Fatal(err)
	}
	script := `test -t 0 && test -t 1 && test -t 2 && echo tty-ok; printf '\033[31mRED\033[0m\n'; stty size`
	cmd := exec.Command(bin, "--port-file", agent.PortFile(), "--owner", "tty-owner", "--", "sh", "-c", script)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = tty, tty, tty
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var screen bytes.Buffer
	done := make(chan struct{})
	go func() {
		io.Copy(&screen, ptmx) // ends with EIO when the wrapper closed the tty
		close(done)
	}()
	werr := cmd.Wait()
	after, err := unix.IoctlGetTermios(int(tty.Fd()), unix.TCGETS)
	if err != nil {
		t.Fatal(err)
	}
	tty.Close()
	<-done
	if werr != nil {
		t.Fatalf("buildguard: %v\n%s", werr, screen.String())
	}
	out := screen.String()
	for _, want := range []string{"tty-ok\r\n", "\x1b[31mRED\x1b[0m\r\n", "30 100\r\n", "buildguard: build owner: tty-owner;"} {
		if !strings.Contains(out, want) {
			t.Errorf("terminal shows %q, want it to contain %q", out, want)
		}
	}
	if *after != *before {
		t.Errorf("terminal state not restored:\nbefore %+v\nafter  %+v", *before, *after)
	}
	cmds := strings.Join(agent.Commands(), "\n")
	if !strings.Contains(cmds, "BUILD started ") || !strings.Contains(cmds, "BUILD ok ") {
		t.Errorf("agent received %q, want started and ok", cmds)
	}
}

// TestWrapSurvivesClosedStdout: when the reader of the wrapper's stdout goes
// away while the wrapper copies the build's output (transcript mode), the
// wrapper is not killed by SIGPIPE; the build finishes and is reported.
func TestWrapSurvivesClosedStdout(t *testing.T) {
	t.Parallel()
	bin, err := exec.LookPath("buildguard")
	if err != nil {
		t.Fatal(err)
	}
	agent := agenttest.NewServer(t)
	dir := t.TempDir()
	script := `i=0; while [ $i -lt 3000 ]; do echo "line $i"; i=$((i+1)); done; touch done`
	cmd := exec.Command(bin, "--port-file", agent.PortFile(), "--owner", "pipe-owner",
		"--transcript", filepath.Join(dir, "transcript"), "--", "sh", "-c", script)
	cmd.Dir = dir
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	out.Close() // nobody reads the wrapper's stdout any more
	if err := cmd.Wait(); err != nil {
		t.Fatalf("buildguard: %v (want exit 0)\n%s", err, stderr.String())
	}
	if _, err := os.Stat(filepath.Join(dir, "done")); err != nil {
		t.Errorf("the build did not finish: %v", err)
	}
	if cmds := strings.Join(agent.Commands(), "\n"); !strings.Contains(cmds, "BUILD ok ") {
		t.Errorf("agent received %q, want BUILD ok", cmds)
	}
}
