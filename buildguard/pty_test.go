//go:build linux

package buildguard

import (
	"bytes"
	"context"
	"io"
	"os"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/creack/pty"
	"golang.org/x/sys/unix"
)

// lockedBuffer collects a terminal's output for assertions while it is written.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// waitOutput waits (bounded) until out contains s, calling poke between looks.
func waitOutput(t *testing.T, out *lockedBuffer, s string, poke func()) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for time.Now().Before(deadline) {
		if strings.Contains(out.String(), s) {
			return
		}
		if poke != nil {
			poke()
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatalf("terminal output %q does not contain %q", out.String(), s)
}

// TestRunUnderTerminal plays the user's terminal with a pty: the wrapper's
// stdin, stdout and stderr are its tty side.
func TestRunUnderTerminal(t *testing.T) {
	t.Parallel()
	ptmx, tty := openPTY(t)
	if err := pty.Setsize(ptmx, &pty.Winsize{Rows: 30, Cols: 100}); err != nil {
		t.Fatal(err)
	}
	before := termios(t, tty)
	var screen lockedBuffer
	go io.Copy(&screen, ptmx)

	var transcript lockedBuffer
	h := newHarness(t)
	h.cfg.Stdin, h.cfg.Stdout, h.cfg.Stderr = tty, tty, tty
	h.cfg.Transcript = &transcript
	argv, env := childCmd(t, "tty")
	h.cfg.Env = env
	g, err := New(h.cfg)
	if err != nil {
		t.Fatal(err)
	}
	type result struct {
		code int
		err  error
	}
	done := make(chan result, 1)
	go func() {
		code, err := g.Run(context.Background(), argv)
		done <- result{code, err}
	}()

	waitOutput(t, &screen, "ready size=30 100", nil)
	during, err := unix.IoctlGetTermios(int(tty.Fd()), unix.TCGETS)
	if err != nil {
		t.Fatal(err)
	}
	if during.Lflag&(unix.ICANON|unix.ECHO) != 0 {
		t.Errorf("the user's terminal is not in raw mode while the build runs (lflag %#x)", during.Lflag)
	}
	// The window grows; the child follows after SIGWINCH.
	if err := pty.Setsize(ptmx, &pty.Winsize{Rows: 40, Cols: 132}); err != nil {
		t.Fatal(err)
	}
	h.sigs <- syscall.SIGWINCH
	waitOutput(t, &screen, "got x size=40 132", func() { ptmx.Write([]byte("x\r")) })
	ptmx.Write([]byte("quit\r"))

	var res result
	select {
	case res = <-done:
	case <-time.After(30 * time.Second):
		t.Fatal("Run did not return")
	}
	if res.err != nil || res.code != 0 {
		t.Fatalf("Run = %d, %v", res.code, res.err)
	}
	out := screen.String()
	for _, want := range []string{"stdin-tty=true stdout-tty=true", "\x1b[31mRED\x1b[0m"} {
		if !strings.Contains(out, want) {
			t.Errorf("terminal output %q lacks %q", out, want)
		}
		if !strings.Contains(transcript.String(), want) {
			t.Errorf("transcript %q lacks %q", transcript.String(), want)
		}
	}
	after := termios(t, tty)
	if *after != *before {
		t.Errorf("terminal state not restored:\nbefore %+v\nafter  %+v", *before, *after)
	}
	if got := h.agent.states(); got != "started,ok" {
		t.Errorf("agent got %s, want started,ok", got)
	}
}

func TestRunUnderTerminalInterruptedRestoresTerminal(t *testing.T) {
	t.Parallel()
	ptmx, tty := openPTY(t)
	before := termios(t, tty)
	var screen lockedBuffer
	go io.Copy(&screen, ptmx)
	h := newHarness(t)
	h.cfg.Stdin, h.cfg.Stdout, h.cfg.Stderr = tty, tty, tty
	argv, env := childCmd(t, "tty")
	h.cfg.Env = env
	g, err := New(h.cfg)
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() {
		_, err := g.Run(context.Background(), argv)
		done <- err
	}()
	waitOutput(t, &screen, "ready size=", nil)
	h.sigs <- syscall.SIGTERM
	select {
	case err = <-done:
	case <-time.After(30 * time.Second):
		t.Fatal("Run did not return")
	}
	if ie, ok := err.(*InterruptedError); !ok || ie.ExitCode() != 143 || ie.Err != nil {
		t.Fatalf("err = %v, want a confirmed interruption with exit 143", err)
	}
	after := termios(t, tty)
	if *after != *before {
		t.Errorf("terminal state not restored:\nbefore %+v\nafter  %+v", *before, *after)
	}
	if got := h.agent.states(); got != "started,failed" {
		t.Errorf("agent got %s, want started,failed", got)
	}
}

// A panic in a goroutine other than Run's skips Run's deferred restore; the
// goroutines that run while our terminal is raw restore it before the panic
// ends the process.
func TestPanicRestoresTerminal(t *testing.T) {
	t.Parallel()
	for _, where := range []string{"output", "wait"} {
		t.Run(where, func(t *testing.T) {
			t.Parallel()
			_, tty := openPTY(t)
			before := termios(t, tty)
			argv, env := childCmd(t, "pty-panic", where)
			cmd := exec.Command(argv[0], argv[1:]...)
			cmd.Env = env
			cmd.Stdin = tty
			var stderr bytes.Buffer
			cmd.Stdout, cmd.Stderr = io.Discard, &stderr
			err := cmd.Run()
			if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 2 || !strings.Contains(stderr.String(), "panic: test panic") {
				t.Fatalf("the wrapper ended with %v, want the test panic (exit 2); stderr:\n%s", err, stderr.String())
			}
			if after := termios(t, tty); *after != *before {
				t.Errorf("terminal state not restored after the panic:\nbefore %+v\nafter  %+v", *before, *after)
			}
		})
	}
}

// A terminal on stdin is not handed to a child in a background process group
// (it would be stopped by SIGTTIN when reading): it reads /dev/null.
func TestExecRunnerTerminalStdinBecomesDevNull(t *testing.T) {
	t.Parallel()
	_, tty := openPTY(t)
	var stdout bytes.Buffer
	r := NewExecRunner(Command{Argv: []string{"readlink", "/proc/self/fd/0"}, Stdin: tty, Stdout: &stdout})
	defer r.Close()
	if err := r.Start(); err != nil {
		t.Fatal(err)
	}
	if code, err := r.Wait(); err != nil || code != 0 {
		t.Fatalf("Wait = %d, %v", code, err)
	}
	if got := strings.TrimSpace(stdout.String()); got != "/dev/null" {
		t.Errorf("child stdin is %q, want /dev/null", got)
	}
}

// When the wrapper's input is not a terminal and ends, the child reading its
// terminal sees the end of input too (it does not wait forever).
func TestPTYRunnerPassesEndOfInput(t *testing.T) {
	t.Parallel()
	ptmx, tty := openPTY(t)
	var screen lockedBuffer
	go io.Copy(&screen, ptmx)
	r := NewPTYRunner(Command{Argv: []string{"sh", "-c", "cat; echo cat-ended"}, Stdin: strings.NewReader("typed\n"), Stdout: tty})
	defer r.Close()
	if err := r.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	var code int
	var err error
	go func() {
		code, err = r.Wait()
		close(done)
	}()
	select {
	case <-done:
	case <-time.After(20 * time.Second):
		r.Kill()
		<-done
		t.Fatal("the child never saw the end of its input")
	}
	if err != nil || code != 0 {
		t.Fatalf("Wait = %d, %v", code, err)
	}
	waitOutput(t, &screen, "cat-ended", nil)
	if !strings.Contains(screen.String(), "typed") {
		t.Errorf("terminal shows %q, want the input echoed", screen.String())
	}
}

// openPTY returns a pty pair whose tty plays the user's terminal; both ends
// are closed when the test ends.
func openPTY(t *testing.T) (ptmx, tty *os.File) {
	t.Helper()
	ptmx, tty, err := pty.Open()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { tty.Close(); ptmx.Close() })
	return ptmx, tty
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
