//go:build linux

package main

import (
	"bytes"
	"errors"
	"io"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/creack/pty"
	"github.com/rogpeppe/go-internal/testscript"
	"golang.org/x/sys/unix"

	"github.com/buildguard/buildguard/internal/testsupport/wait"
)

// ptyrunTimeout bounds one ptyrun: the whole dialogue and the exit.
const ptyrunTimeout = 30 * time.Second

// cmdPtyrun is `ptyrun [-when TEXT -type TEXT]... CODE PROG [ARG...]`: it runs
// PROG in a new session whose controlling terminal is a fresh pseudo-terminal
// (stdin, stdout and stderr on it), as a user's shell runs a command typed
// at its prompt, and requires exit code CODE. Each -when/-type pair waits
// until the terminal has shown TEXT (after what the previous pair waited for)
// and then types the -type text (\r, \n and \x03, Ctrl-C, are understood). What the
// terminal showed is written to the file `screen`. It fails when the
// terminal's modes after the run differ from those before, or when the run
// takes longer than 30 s (the program is then killed).
func cmdPtyrun(ts *testscript.TestScript, neg bool, args []string) {
	if neg {
		ts.Fatalf("usage: ptyrun [-when TEXT -type TEXT]... CODE PROG [ARG...]")
	}
	type step struct{ when, typ string }
	var steps []step
	for len(args) >= 4 && args[0] == "-when" && args[2] == "-type" {
		typ := strings.NewReplacer(`\r`, "\r", `\n`, "\n", `\x03`, "\x03").Replace(args[3])
		steps = append(steps, step{args[1], typ})
		args = args[4:]
	}
	if len(args) < 2 {
		ts.Fatalf("usage: ptyrun [-when TEXT -type TEXT]... CODE PROG [ARG...]")
	}
	want, err := strconv.Atoi(args[0])
	if err != nil {
		ts.Fatalf("ptyrun: %v", err)
	}
	ptmx, tty, err := pty.Open()
	ts.Check(err)
	defer ptmx.Close()
	before, err := unix.IoctlGetTermios(int(tty.Fd()), unix.TCGETS)
	ts.Check(err)

	prog := args[1]
	if p, err := exec.LookPath(prog); err == nil {
		prog = p
	}
	cmd := exec.Command(prog, args[2:]...)
	cmd.Dir = ts.Getenv("WORK")
	for _, kv := range []string{"PATH", "HOME", "WORK", "TMPDIR", "BUILDGUARD_LOG_LEVEL", "BUILDGUARD_LOG_FORMAT"} {
		cmd.Env = append(cmd.Env, kv+"="+ts.Getenv(kv))
	}
	cmd.Stdin, cmd.Stdout, cmd.Stderr = tty, tty, tty
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true, Setctty: true, Ctty: 0}
	ts.Check(cmd.Start())
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()

	var mu sync.Mutex
	var screen bytes.Buffer
	copied := make(chan struct{})
	go func() {
		defer close(copied)
		buf := make([]byte, 4096)
		for {
			n, err := ptmx.Read(buf)
			mu.Lock()
			screen.Write(buf[:n])
			mu.Unlock()
			if err != nil {
				return
			}
		}
	}()
	shown := func() string {
		mu.Lock()
		defer mu.Unlock()
		return screen.String()
	}
	deadline := time.Now().Add(ptyrunTimeout)
	fail := func(format string, a ...any) {
		cmd.Process.Kill()
		<-exited
		tty.Close()
		ts.Fatalf(format+"\nterminal:\n%q", append(a, shown())...)
	}
	from := 0
	for _, s := range steps {
		if !wait.Until(time.Until(deadline), func() bool {
			i := strings.Index(shown()[from:], s.when)
			if i >= 0 {
				from += i + len(s.when)
			}
			return i >= 0
		}) {
			fail("ptyrun: the terminal did not show %q within %v", s.when, ptyrunTimeout)
		}
		_, err := ptmx.Write([]byte(s.typ))
		ts.Check(err)
	}
	var werr error
	select {
	case werr = <-exited:
	case <-time.After(time.Until(deadline)):
		fail("ptyrun: %s did not exit within %v", args[1], ptyrunTimeout)
	}
	after, err := unix.IoctlGetTermios(int(tty.Fd()), unix.TCGETS)
	ts.Check(err)
	tty.Close()
	select {
	case <-copied:
	case <-time.After(5 * time.Second):
		ts.Fatalf("ptyrun: the terminal's output did not end")
	}
	ts.Check(os.WriteFile(ts.MkAbs("screen"), []byte(shown()), 0o644))
	got := 0
	var ee *exec.ExitError
	switch {
	case errors.As(werr, &ee):
		got = ee.ExitCode()
	case werr != nil && !errors.Is(werr, io.EOF):
		ts.Fatalf("ptyrun: %v", werr)
	}
	if got != want {
		ts.Fatalf("ptyrun: exit code %d, want %d\nterminal:\n%q", got, want, shown())
	}
	if *after != *before {
		ts.Fatalf("ptyrun: the terminal's modes were not restored:\nbefore %+v\nafter  %+v", *before, *after)
	}
}
