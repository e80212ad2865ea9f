//go:build linux

package main

import (
	"bytes"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/buildguard/buildguard/internal/proc"
	"github.com/buildguard/buildguard/internal/testsupport/wait"

	"github.com/buildguard/buildguard/harness/fakeagent"
	"github.com/creack/pty"
	"golang.org/x/sys/unix"
)

// TestWrapUnderTerminal runs the real command with a pty as the user's
// terminal (stdin, stdout and stderr): the build sees a terminal of the same
// size, its colour sequences arrive intact, and the terminal is restored.
func TestWrapUnderTerminal(t *testing.T) {
	t.Parallel()
	bin, agent, ptmx, tty := terminalFixture(t)
	if err := pty.Setsize(ptmx, &pty.Winsize{Rows: 30, Cols: 100}); err != nil {
		t.Fatal(err)
	}
	before := termios(t, tty)
	script := `test -t 0 && test -t 1 && test -t 2 && echo tty-ok; printf '\033[31mRED\033[0m\n'; stty size`
	r := startOnTerminal(t, bin, ptmx, tty, nil, "--port-file", agent.PortFile(), "--owner", "tty-owner", "--", "sh", "-c", script)
	werr := <-r.exited
	after, out := r.closeTerminal(t, tty)
	if werr != nil {
		t.Fatalf("buildguard: %v\n%s", werr, out)
	}
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
	agent := fakeagent.NewServer(t)
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

// TestWrapLogLinesWhileTerminalIsRaw: a line the wrapper logs while the build
// runs under a pty (our terminal in raw mode, no output processing) still
// ends with "\r\n", so it and the lines after it start at the left margin
// instead of forming a staircase; the terminal is restored afterwards.
func TestWrapLogLinesWhileTerminalIsRaw(t *testing.T) {
	t.Parallel()
	bin, agent, ptmx, tty := terminalFixture(t)
	before := termios(t, tty)
	pidFile := filepath.Join(t.TempDir(), "child.pid")
	r := startOnTerminal(t, bin, ptmx, tty, []string{"BUILDGUARD_LOG_LEVEL=info"}, "--port-file", agent.PortFile(), "--owner", "raw-owner", "--",
		"sh", "-c", `echo $$ > "$1.tmp" && mv "$1.tmp" "$1"; exec sleep 300`, "sh", pidFile)
	r.waitPID(t, pidFile)
	raw := termios(t, tty)
	if raw.Oflag&unix.OPOST != 0 {
		t.Errorf("the terminal keeps output processing while the build runs; this test needs raw mode")
	}
	r.cmd.Process.Signal(unix.SIGTERM)
	werr := <-r.exited
	after, out := r.closeTerminal(t, tty)
	var ee *exec.ExitError
	if !errors.As(werr, &ee) || ee.ExitCode() != 143 {
		t.Fatalf("buildguard: %v, want exit 143\n%q", werr, out)
	}
	i := strings.Index(out, "forwarding the interrupt to the build")
	if i < 0 {
		t.Fatalf("terminal shows %q, want the forwarding log line", out)
	}
	if line, _, _ := strings.Cut(out[i:], "\n"); !strings.HasSuffix(line, "\r") {
		t.Errorf("log line written in raw mode ends with a bare \\n: %q", out[i:])
	}
	if *after != *before {
		t.Errorf("terminal state not restored:\nbefore %+v\nafter  %+v", *before, *after)
	}
}

// TestWrapCtrlCUnderPTYStopsStubbornBuild: under a pty the user's terminal is
// raw, so Ctrl-C arrives as a byte, not as SIGINT. The wrapper still treats
// it as SIGINT (docs/decisions.md#D8): forwarded to the build's process group, SIGKILL after
// the grace period when the build ignores it, BUILD failed acknowledged,
// exit 130, and the terminal restored.
func TestWrapCtrlCUnderPTYStopsStubbornBuild(t *testing.T) {
	t.Parallel()
	bin, agent, ptmx, tty := terminalFixture(t)
	before := termios(t, tty)
	pidFile := filepath.Join(t.TempDir(), "child.pid")
	script := `trap '' INT TERM HUP; echo $$ > "$1.tmp" && mv "$1.tmp" "$1"; while :; do sleep 1; done`
	r := startOnTerminal(t, bin, ptmx, tty, nil, "--port-file", agent.PortFile(), "--owner", "ctrlc-owner", "--grace", "200ms", "--",
		"sh", "-c", script, "sh", pidFile)
	pid := r.waitPID(t, pidFile)
	if _, err := ptmx.Write([]byte{3}); err != nil { // Ctrl-C typed by the user
		t.Fatal(err)
	}
	var werr error
	select {
	case werr = <-r.exited:
	case <-time.After(20 * time.Second):
		r.cmd.Process.Kill()
		<-r.exited
		unix.Kill(pid, unix.SIGKILL) // the build ignores the hangup
		t.Fatal("Ctrl-C did not stop the build")
	}
	after, out := r.closeTerminal(t, tty)
	var ee *exec.ExitError
	if !errors.As(werr, &ee) || ee.ExitCode() != 130 {
		t.Fatalf("buildguard: %v, want exit 130\n%q", werr, out)
	}
	if !strings.Contains(out, "build interrupted (interrupt); BUILD failed was acknowledged") {
		t.Errorf("terminal shows %q, want the interruption line", out)
	}
	if *after != *before {
		t.Errorf("terminal state not restored:\nbefore %+v\nafter  %+v", *before, *after)
	}
	if cmds := strings.Join(agent.Commands(), "\n"); !strings.Contains(cmds, "BUILD failed ") {
		t.Errorf("agent received %q, want BUILD failed", cmds)
	}
}

// TestWrapSIGKILLUnderPTYEndsBuild: when the wrapper is SIGKILLed while the
// build runs under a pty, the kernel ends the build too (Pdeathsig, as in
// pipe mode), also a build that ignores the hangup of its closed terminal.
// The hold stays installed (docs/decisions.md#D8).
func TestWrapSIGKILLUnderPTYEndsBuild(t *testing.T) {
	t.Parallel()
	bin, agent, ptmx, tty := terminalFixture(t)
	pidFile := filepath.Join(t.TempDir(), "child.pid")
	script := `trap '' INT TERM HUP; echo $$ > "$1.tmp" && mv "$1.tmp" "$1"; while :; do sleep 1; done`
	r := startOnTerminal(t, bin, ptmx, tty, nil, "--port-file", agent.PortFile(), "--owner", "kill-owner", "--", "sh", "-c", script, "sh", pidFile)
	pid := r.waitPID(t, pidFile)
	r.cmd.Process.Kill()
	<-r.exited
	tty.Close()
	if left := wait.GoneWithin(10*time.Second, pid); len(left) > 0 {
		unix.Kill(pid, unix.SIGKILL)
		t.Fatalf("the build (pid %d) outlived the SIGKILLed wrapper", pid)
	}
	if cmds := strings.Join(agent.Commands(), "\n"); strings.Contains(cmds, "BUILD ok") || strings.Contains(cmds, "BUILD failed") {
		t.Errorf("agent received %q, want BUILD started only", cmds)
	}
}

// TestWrapSIGKILLUnderPTYOutlivedJobEnded: under a pty the build leads a
// session; a job it starts in a process group of its own in that session,
// deaf to the hangup, outlives the SIGKILLed wrapper and keeps writing. The
// next build of the project does not start while it runs: it ends it after
// its --grace and says so (docs/decisions.md#D22).
func TestWrapSIGKILLUnderPTYOutlivedJobEnded(t *testing.T) {
	t.Parallel()
	bin, agent, ptmx, tty := terminalFixture(t)
	script := `set -m
(trap '' HUP; while :; do date +%s.%N >> written.log; sleep 0.02; done) &
echo $! > job.pid.tmp && mv job.pid.tmp job.pid
trap '' INT TERM HUP
while :; do sleep 1; done`
	r := startOnTerminal(t, bin, ptmx, tty, nil, "--port-file", agent.PortFile(), "--owner", "kill-owner", "--", "sh", "-c", script)
	job := r.waitPID(t, filepath.Join(r.dir, "job.pid"))
	t.Cleanup(func() { _ = unix.Kill(job, unix.SIGKILL) })
	written := func() []string {
		data, _ := os.ReadFile(filepath.Join(r.dir, "written.log"))
		return strings.Fields(string(data))
	}
	wait.For(t, 10*time.Second, "the job's first write", func() bool { return len(written()) > 0 })
	if p, ok := proc.Lookup(job); !ok || p.PGID == p.Session {
		t.Fatalf("the job is %+v, %v; want it in a process group of its own in the build's session", p, ok)
	}
	r.cmd.Process.Kill()
	<-r.exited
	tty.Close()
	// The fault: the job outlives the wrapper and writes after it died.
	n := len(written())
	wait.For(t, 10*time.Second, "a write of the job after the wrapper died", func() bool { return len(written()) > n })

	next := exec.Command(bin, "--port-file", agent.PortFile(), "--owner", "kill-owner", "--grace", "200ms", "--", "sh", "-c", "date +%s.%N > next.start")
	next.Dir = r.dir
	var stderr strings.Builder
	next.Stderr = &stderr
	if err := next.Run(); err != nil {
		t.Fatalf("the next build: %v\n%s", err, stderr.String())
	}
	if !strings.Contains(stderr.String(), "before this build started, it ended") {
		t.Errorf("the next build does not say it ended the job:\n%s", stderr.String())
	}
	if !proc.Gone(job) {
		t.Error("the job still runs after the next build")
	}
	w := written()
	data, _ := os.ReadFile(filepath.Join(r.dir, "next.start"))
	if start := strings.TrimSpace(string(data)); start <= w[len(w)-1] {
		t.Errorf("the next build started at %s, before the killed build's last write at %s", start, w[len(w)-1])
	}
}

// terminalRun is the wrapper running with a pty's tty as the user's terminal.
type terminalRun struct {
	cmd    *exec.Cmd
	dir    string        // its working directory, its own project
	exited chan error    // receives the wrapper's Wait once
	screen lockedBuffer  // what the terminal showed; complete once copied is closed
	copied chan struct{} // closed when the terminal's output ended
}

// lockedBuffer is a buffer one goroutine writes while another reads it.
type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// waitScreen waits (bounded) until the terminal has shown s; when it does
// not, it kills the wrapper and fails the test.
func (r *terminalRun) waitScreen(t *testing.T, s string) {
	t.Helper()
	if !wait.Until(30*time.Second, func() bool { return strings.Contains(r.screen.String(), s) }) {
		r.cmd.Process.Kill()
		<-r.exited
		t.Fatalf("the terminal did not show %q within 30s:\n%q", s, r.screen.String())
	}
}

// startOnTerminal starts the wrapper with args, and env added to ours, on
// tty (stdin, stdout and stderr), and copies what the terminal shows.
func startOnTerminal(t *testing.T, bin string, ptmx, tty *os.File, env []string, args ...string) *terminalRun {
	t.Helper()
	r := &terminalRun{cmd: exec.Command(bin, args...), dir: t.TempDir(), exited: make(chan error, 1), copied: make(chan struct{})}
	r.cmd.Env = append(os.Environ(), env...)
	r.cmd.Dir = r.dir // its own project: the builds of one project take turns (docs/decisions.md#D18)
	r.cmd.Stdin, r.cmd.Stdout, r.cmd.Stderr = tty, tty, tty
	if err := r.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { r.exited <- r.cmd.Wait() }()
	go func() {
		io.Copy(&r.screen, ptmx) // ends with EIO once the last tty is closed
		close(r.copied)
	}()
	return r
}

// waitPID waits (bounded) until the build wrote its pid to path, and returns
// it; when it does not, it kills the wrapper and fails the test.
func (r *terminalRun) waitPID(t *testing.T, path string) int {
	t.Helper()
	pids, err := wait.PIDFileWithin(path, 20*time.Second)
	if err != nil || len(pids) != 1 {
		r.cmd.Process.Kill()
		<-r.exited
		t.Fatalf("the build did not start: %v %v", pids, err)
	}
	return pids[0]
}

// closeTerminal, once the wrapper exited, returns the terminal settings and
// what the terminal showed, after closing tty.
func (r *terminalRun) closeTerminal(t *testing.T, tty *os.File) (*unix.Termios, string) {
	t.Helper()
	after := termios(t, tty)
	tty.Close()
	<-r.copied
	return after, r.screen.String()
}

// terminalFixture returns the buildguard binary (installed by
// testscript.Main), a fake agent, and a pty pair whose tty plays the user's
// terminal; the pty is closed when the test ends.
func terminalFixture(t *testing.T) (bin string, agent *fakeagent.Server, ptmx, tty *os.File) {
	t.Helper()
	bin, err := exec.LookPath("buildguard")
	if err != nil {
		t.Fatal(err)
	}
	ptmx, tty, err = pty.Open()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ptmx.Close() })
	return bin, fakeagent.NewServer(t), ptmx, tty
}

// termios returns the terminal settings of tty now.
func termios(t *testing.T, tty *os.File) *unix.Termios {
	t.Helper()
	st, err := unix.IoctlGetTermios(int(tty.Fd()), unix.TCGETS)
	if err != nil {
		t.Fatal(err)
	}
	return st
}
