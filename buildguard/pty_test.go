//go:build linux

package buildguard

import (
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/buildguard/buildguard/internal/proc"
	"github.com/buildguard/buildguard/internal/testsupport/reexec"
	"github.com/buildguard/buildguard/internal/testsupport/wait"

	"github.com/buildguard/buildguard/internal/testsupport/lockedbuf"

	"github.com/creack/pty"
	"golang.org/x/sys/unix"
)

// waitOutput waits (bounded) until out contains s, calling poke between looks.
func waitOutput(t *testing.T, out *lockedbuf.Buffer, s string, poke func()) {
	t.Helper()
	if !wait.Until(20*time.Second, func() bool {
		if strings.Contains(out.String(), s) {
			return true
		}
		if poke != nil {
			poke()
		}
		return false
	}) {
		t.Fatalf("terminal output %q does not contain %q", out.String(), s)
	}
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
	var screen lockedbuf.Buffer
	go io.Copy(&screen, ptmx)

	var transcript lockedbuf.Buffer
	h := newHarness(t)
	h.cfg.Stdin, h.cfg.Stdout, h.cfg.Stderr = tty, tty, tty
	h.cfg.Transcript = &transcript
	argv, env := reexec.Command(t, "tty")
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
	var screen lockedbuf.Buffer
	go io.Copy(&screen, ptmx)
	h := newHarness(t)
	h.cfg.Stdin, h.cfg.Stdout, h.cfg.Stderr = tty, tty, tty
	argv, env := reexec.Command(t, "tty")
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

// jobShell is a job-control shell (bash -m) on a pty, playing the user's
// shell around a guarded build of the "tty" child.
type jobShell struct {
	ptmx, tty *os.File
	screen    *lockedbuf.Buffer
	before    *unix.Termios // the terminal as the shell has it
	child     int           // the build's pid
}

// startJobShell runs script in the shell, with "$@" the wrapper, and waits
// until the build runs with the terminal raw.
func startJobShell(t *testing.T, script string) *jobShell {
	t.Helper()
	argv, env := reexec.Command(t, "terminal-guard")
	j := startShell(t, script, argv, env)
	waitOutput(t, j.screen, "ready size=", nil)
	m := regexp.MustCompile(`pid=(\d+)`).FindStringSubmatch(j.screen.String())
	if m == nil {
		t.Fatalf("the build printed no pid: %q", j.screen.String())
	}
	j.child, _ = strconv.Atoi(m[1])
	if !j.raw(t) {
		t.Fatalf("the terminal is not raw while the build runs: %+v", *termios(t, j.tty))
	}
	return j
}

// startShell runs script in bash -m, a job-control shell leading a new
// session on a fresh pty, with args as "$@" and the environment env; the
// shell is killed when the test ends (its terminal's hangup ends the rest).
func startShell(t *testing.T, script string, args, env []string) *jobShell {
	t.Helper()
	bash, err := exec.LookPath("bash")
	if err != nil {
		t.Fatal("bash is needed to play a job-control shell")
	}
	ptmx, tty := openPTY(t)
	j := &jobShell{ptmx: ptmx, tty: tty, screen: &lockedbuf.Buffer{}, before: termios(t, tty)}
	go io.Copy(j.screen, ptmx)
	sh := exec.Command(bash, append([]string{"--norc", "--noprofile", "-m", "-c", script, "bash"}, args...)...)
	sh.Env = env
	sh.Stdin, sh.Stdout, sh.Stderr = tty, tty, tty
	sh.SysProcAttr = &syscall.SysProcAttr{Setsid: true, Setctty: true}
	if err := sh.Start(); err != nil {
		t.Fatal(err)
	}
	shDone := make(chan error, 1)
	go func() { shDone <- sh.Wait() }()
	t.Cleanup(func() {
		sh.Process.Kill()
		<-shDone
	})
	return j
}

func (j *jobShell) raw(t *testing.T) bool { return termios(t, j.tty).Lflag&unix.ICANON == 0 }

func (j *jobShell) typeIn(t *testing.T, s string) {
	t.Helper()
	if _, err := j.ptmx.Write([]byte(s)); err != nil {
		t.Fatal(err)
	}
}

// suspend types the suspend key and checks the stopped job: the shell has
// its terminal back unchanged, and the build is stopped.
func (j *jobShell) suspend(t *testing.T) {
	t.Helper()
	j.typeIn(t, string(j.before.Cc[unix.VSUSP]))
	waitOutput(t, j.screen, "stopped=148", nil)
	if after := termios(t, j.tty); *after != *j.before {
		t.Errorf("the stopped job left the terminal changed:\nbefore %+v\nafter  %+v", *j.before, *after)
	}
	// The stop reaches the build's group as a signal each of its processes
	// takes when it next runs: on a loaded machine, after the shell saw the
	// wrapper stop.
	var state byte
	if !wait.Until(20*time.Second, func() bool { state, _ = proc.State(j.child); return state == 'T' }) {
		t.Errorf("the build's state while its job is stopped is %c, want T (stopped)", state)
	}
}

// finish checks that input reaches the build on a raw terminal, ends it,
// and checks the confirmed finish and the terminal restored.
func (j *jobShell) finish(t *testing.T) {
	t.Helper()
	j.typeIn(t, "hello\r")
	waitOutput(t, j.screen, "got hello", nil)
	if !wait.Until(20*time.Second, func() bool { return j.raw(t) }) {
		t.Errorf("the terminal is not raw again after fg: %+v", *termios(t, j.tty))
	}
	j.typeIn(t, "quit\r")
	waitOutput(t, j.screen, "done=0", nil)
	if !strings.Contains(j.screen.String(), "agent=started,ok code=0 err=<nil>") {
		t.Errorf("the wrapper did not report a confirmed build; terminal output:\n%q", j.screen.String())
	}
	if after := termios(t, j.tty); *after != *j.before {
		t.Errorf("terminal state not restored at the end:\nbefore %+v\nafter  %+v", *j.before, *after)
	}
}

// The suspend key typed on the raw terminal stops the build and the
// wrapper's job as it would stop a build without the wrapper: the shell gets
// its terminal back in its own mode, and fg raws it again and continues the
// build.
func TestSuspendKeyStopsAndContinuesTheJob(t *testing.T) {
	t.Parallel()
	// The shell waits for a line while the job is stopped, so that the test
	// sees the terminal as the shell has it.
	j := startJobShell(t, `"$@"; echo "stopped=$?"; read -r line; fg; echo "done=$?"`)
	j.suspend(t)
	j.typeIn(t, "fg\r") // the line the shell reads, then fg
	j.finish(t)
}

// Continued in the background, the build runs on while the terminal stays
// the shell's; fg then makes it raw again, whether the wrapper was stopped
// again meanwhile (reading the terminal from the background) or not (fg
// then sends no signal).
func TestSuspendedJobContinuesInTheBackground(t *testing.T) {
	t.Parallel()
	j := startJobShell(t, `"$@"; echo "stopped=$?"; read -r line; bg; read -r line; fg; echo "done=$?"`)
	j.suspend(t)
	j.typeIn(t, "bg\r")
	wait.For(t, 20*time.Second, "the build continuing", func() bool { s, _ := proc.State(j.child); return s != 'T' })
	if after := termios(t, j.tty); *after != *j.before {
		t.Errorf("the job in the background changed the terminal:\nbefore %+v\nafter  %+v", *j.before, *after)
	}
	j.typeIn(t, "fg\r")
	wait.For(t, 20*time.Second, "the terminal raw again after fg", func() bool { return j.raw(t) })
	j.finish(t)
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
			argv, env := reexec.Command(t, "pty-panic", where)
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

// A panic in pipe mode while the build has the terminal's foreground gives
// the terminal back before the panic ends the wrapper (docs/decisions.md#D12):
// the shell that ran the wrapper, in the same process group as a script
// runs it, is in the foreground again.
func TestPanicInPipeModeGivesTheTerminalBack(t *testing.T) {
	t.Parallel()
	ptmx, tty := openPTY(t)
	var screen lockedbuf.Buffer
	go io.Copy(&screen, ptmx)
	argv, env := reexec.Command(t, "pty-panic", "pipe")
	script := `"$@"; awk '{ print ($5 == $8 ? "shell-foreground" : "shell-background") }' /proc/$$/stat`
	sh := exec.Command("sh", append([]string{"-c", script, "sh"}, argv...)...)
	sh.Env = env
	sh.Stdin, sh.Stdout, sh.Stderr = tty, tty, tty
	sh.SysProcAttr = &syscall.SysProcAttr{Setsid: true, Setctty: true}
	if err := sh.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- sh.Wait() }()
	select {
	case <-done:
	case <-time.After(20 * time.Second):
		sh.Process.Kill()
		<-done
		t.Fatalf("the shell did not finish; terminal:\n%q", screen.String())
	}
	waitOutput(t, &screen, "-foreground", func() {})
	out := screen.String()
	if !strings.Contains(out, "panic: test panic") || !strings.Contains(out, "shell-foreground") {
		t.Errorf("terminal shows %q, want the test panic and the shell in the foreground", out)
	}
}

// A terminal on stdin is inherited by the child, as under a shell
// (docs/decisions.md#D12), never replaced by /dev/null.
func TestExecRunnerInheritsTerminalStdin(t *testing.T) {
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
	if got := strings.TrimSpace(stdout.String()); got != tty.Name() {
		t.Errorf("child stdin is %q, want the terminal %s", got, tty.Name())
	}
}

// When the wrapper's input is not a terminal and ends, the child reading its
// terminal sees the end of input too (it does not wait forever).
func TestPTYRunnerPassesEndOfInput(t *testing.T) {
	t.Parallel()
	ptmx, tty := openPTY(t)
	var screen lockedbuf.Buffer
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

// pipeJob is a job-control shell (bash -m) on a pty running a guarded build
// of the "job" child in pipe mode: the wrapper's stdout is a file, its stdin
// the shell's terminal (docs/decisions.md#D12).
type pipeJob struct {
	*jobShell
	out string // the wrapper's stdout
}

// startPipeJob runs script in the shell, with $1 the output file and the
// rest of "$@" the wrapper, and waits until the build reports its pid.
func startPipeJob(t *testing.T, script string) *pipeJob {
	t.Helper()
	out := filepath.Join(t.TempDir(), "build.log")
	argv, env := reexec.Command(t, "terminal-guard", "job")
	j := &pipeJob{jobShell: startShell(t, script, append([]string{out}, argv...), env), out: out}
	waitOutput(t, j.screen, " ready", nil)
	m := regexp.MustCompile(`pid=(\d+) ready`).FindStringSubmatch(j.screen.String())
	if m == nil {
		t.Fatalf("the build printed no pid: %q", j.screen.String())
	}
	j.child, _ = strconv.Atoi(m[1])
	return j
}

// foreground is the terminal's foreground process group.
func (j *pipeJob) foreground(t *testing.T) int {
	t.Helper()
	fg, err := unix.IoctlGetInt(int(j.ptmx.Fd()), unix.TIOCGPGRP)
	if err != nil {
		t.Fatal(err)
	}
	return fg
}

// finish types a line the build reads from its stdin (the terminal) and
// prints to the output file, ends it, and checks the confirmed finish and
// the terminal restored.
func (j *pipeJob) finish(t *testing.T) {
	t.Helper()
	wait.For(t, 20*time.Second, "the build having the terminal's foreground", func() bool { return j.foreground(t) == j.child })
	j.typeIn(t, "hello\r")
	waitOutput(t, j.screen, "got hello", nil)
	j.typeIn(t, "quit\r")
	waitOutput(t, j.screen, "done=0", nil)
	if !strings.Contains(j.screen.String(), "agent=started,ok code=0 err=<nil>") {
		t.Errorf("the wrapper did not report a confirmed build; terminal output:\n%q", j.screen.String())
	}
	if b, err := os.ReadFile(j.out); err != nil || string(b) != "got hello\n" {
		t.Errorf("the build's stdout file holds %q (%v), want the line it read", b, err)
	}
	if after := termios(t, j.tty); *after != *j.before {
		t.Errorf("terminal state not restored at the end:\nbefore %+v\nafter  %+v", *j.before, *after)
	}
}

// Ctrl-Z in pipe mode suspends the build like a shell job: the build (the
// terminal's foreground) stops, the wrapper's job stops, the shell has its
// terminal back; fg gives the build the terminal again and it goes on.
func TestPipeModeSuspendKeyStopsAndContinuesTheJob(t *testing.T) {
	t.Parallel()
	j := startPipeJob(t, `out=$1; shift; "$@" > "$out"; echo "stopped=$?"; read -r line; fg; echo "done=$?"`)
	wait.For(t, 20*time.Second, "the build having the terminal's foreground", func() bool { return j.foreground(t) == j.child })
	j.typeIn(t, string(j.before.Cc[unix.VSUSP]))
	waitOutput(t, j.screen, "stopped=148", nil)
	if state, _ := proc.State(j.child); state != 'T' {
		t.Errorf("the build's state while its job is stopped is %c, want T (stopped)", state)
	}
	if fg := j.foreground(t); fg == j.child {
		t.Errorf("the stopped build kept the terminal's foreground")
	}
	if after := termios(t, j.tty); *after != *j.before {
		t.Errorf("the stopped job left the terminal changed:\nbefore %+v\nafter  %+v", *j.before, *after)
	}
	j.typeIn(t, "fg\r") // the line the shell reads, then fg
	j.finish(t)
}

// Started in the background, a build that reads the terminal is stopped by
// SIGTTIN; the wrapper's job stops with it, as the shell shows a job that
// waits for the terminal, and fg gives the build the terminal and continues
// it: the wrapper never waits forever on a stopped build.
func TestPipeModeBuildReadingFromTheBackgroundWaitsForFg(t *testing.T) {
	t.Parallel()
	// bash's wait returns when the job stops.
	j := startPipeJob(t, `out=$1; shift; "$@" > "$out" & wait; echo "job-stopped"; read -r line; fg; echo "done=$?"`)
	waitOutput(t, j.screen, "job-stopped", nil)
	if state, _ := proc.State(j.child); state != 'T' {
		t.Errorf("the build's state while its job is stopped is %c, want T (stopped)", state)
	}
	j.typeIn(t, "fg\r") // the line the shell reads, then fg
	j.finish(t)
}

// Under a pty too, exit 0 is ok only with an empty process group
// (docs/decisions.md#D12): a process that survives the terminal's hangup
// is killed after the grace period and reported.
func TestPTYRunnerStragglerFailsTheBuild(t *testing.T) {
	t.Parallel()
	ptmx, tty := openPTY(t)
	go io.Copy(io.Discard, ptmx)
	pidFile := filepath.Join(t.TempDir(), "pid")
	script := `trap '' HUP; sleep 300 & echo $! > "$1.tmp"; mv "$1.tmp" "$1"`
	r := NewPTYRunner(Command{Argv: []string{"sh", "-c", script, "sh", pidFile}, Stdin: strings.NewReader(""), Stdout: tty, Grace: 100 * time.Millisecond})
	defer r.Close()
	if err := r.Start(); err != nil {
		t.Fatal(err)
	}
	code, err := r.Wait()
	var se *StragglersError
	if code != 0 || !errors.As(err, &se) || se.N != 1 {
		t.Fatalf("Wait = %d, %v; want 0 and 1 straggler", code, err)
	}
	wait.Gone(t, 10*time.Second, wait.PIDFile(t, 20*time.Second, pidFile)...)
}
