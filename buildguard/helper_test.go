//go:build unix

package buildguard

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"runtime"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/buildguard/buildguard/agentproto"
	"github.com/buildguard/buildguard/internal/testsupport/reexec"
	"golang.org/x/term"
)

func TestMain(m *testing.M) { reexec.Main(m, childMain) }

// childMain is a build command with scripted behaviour, run as the test
// binary re-executed (reexec): mode is the child program.
func childMain(mode string, args []string) int {
	switch mode {
	case "exit": // exit CODE
		n, _ := strconv.Atoi(args[0])
		return n
	case "print": // print OUT ERR: writes to stdout and stderr
		fmt.Fprint(os.Stdout, args[0])
		fmt.Fprint(os.Stderr, args[1])
		return 0
	case "args": // one line per argument, quoted
		for _, a := range args {
			fmt.Printf("%q\n", a)
		}
		return 0
	case "env": // env FILE NAME: writes the value of the variable NAME to FILE, exits 0
		if err := os.WriteFile(args[0], []byte(os.Getenv(args[1])), 0o644); err != nil {
			return 3
		}
		return 0
	case "marker": // marker FILE: creates FILE, exits 0
		if err := os.WriteFile(args[0], []byte("ran\n"), 0o644); err != nil {
			return 3
		}
		return 0
	case "sleeper": // sleeper PIDFILE [ignore]: starts a grandchild, records both pids, waits
		gc := exec.Command("sleep", "300")
		if err := gc.Start(); err != nil {
			return 4
		}
		// Ignored after the grandchild started, which keeps default dispositions.
		if len(args) > 1 && args[1] == "ignore" {
			signal.Ignore(syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP)
		}
		tmp := args[0] + ".tmp"
		os.WriteFile(tmp, []byte(fmt.Sprintf("%d %d", os.Getpid(), gc.Process.Pid)), 0o644)
		os.Rename(tmp, args[0])
		time.Sleep(300 * time.Second)
		return 0
	case "gradle-cycles": // a continuous Gradle build that plays the cycle init script (continuous_test.go)
		return fakeGradle(args)
	case "guard": // guard keep|release: one Run on the process's own signals, then a SIGTERM to itself
		return guardThenSignal(args[0] == "keep")
	case "admit-interrupt": // one Run, started with SIGINT ignored, whose turn sends the process a SIGINT and waits
		return admitThenInterrupt()
	case "admit-catching": // one Run on the process's own signals, whose turn reports whether they were caught already
		return admitWhileCatching()
	case "terminal-guard": // terminal-guard [MODE]: one Run on the process's own stdio and signals, of the child MODE (default "tty")
		mode := "tty"
		if len(args) > 0 {
			mode = args[0]
		}
		return guardOnTerminal(mode)
	case "pty-panic": // pty-panic output|wait|pipe: one Run on a pty whose output copy or whose wait panics, or in pipe mode whose output copy panics
		return guardThenPanic(args[0])
	case "tty": // reports its terminal and pid, then echoes input lines with the terminal size until "quit"
		fmt.Printf("stdin-tty=%v stdout-tty=%v pid=%d\n", term.IsTerminal(0), term.IsTerminal(1), os.Getpid())
		fmt.Print("\x1b[31mRED\x1b[0m\n")
		cols, rows, _ := term.GetSize(1)
		fmt.Printf("ready size=%d %d\n", rows, cols)
		sc := bufio.NewScanner(os.Stdin)
		for sc.Scan() {
			if sc.Text() == "quit" {
				return 0
			}
			cols, rows, _ := term.GetSize(1)
			fmt.Printf("got %s size=%d %d\n", sc.Text(), rows, cols)
		}
		return 5
	case "job": // reports its pid on stderr, then echoes input lines to stdout and stderr until "quit"
		fmt.Fprintf(os.Stderr, "pid=%d ready\n", os.Getpid())
		sc := bufio.NewScanner(os.Stdin)
		for sc.Scan() {
			if sc.Text() == "quit" {
				return 0
			}
			fmt.Printf("got %s\n", sc.Text())
			fmt.Fprintf(os.Stderr, "got %s\n", sc.Text())
		}
		return 5
	}
	return reexec.Unknown(mode)
}

// admitThenInterrupt runs one build on the process's own signals, with
// SIGINT ignored as under a shell's background job or expectcode, whose
// Admit sends the process a SIGINT as soon as it is called and waits for
// the build's turn to be cancelled (at most 5 s). One P makes the race
// with the signal catch certain rather than likely. It prints the outcome.
func admitThenInterrupt() int {
	runtime.GOMAXPROCS(1)
	signal.Ignore(syscall.SIGINT)
	return runAdmitted(func(ctx context.Context) ([]string, func(), error) {
		if err := syscall.Kill(os.Getpid(), syscall.SIGINT); err != nil {
			return nil, nil, err
		}
		select {
		case <-ctx.Done():
			return nil, nil, ctx.Err()
		case <-time.After(5 * time.Second):
			return nil, nil, errors.New("the SIGINT sent while waiting for the turn was lost")
		}
	})
}

// admitWhileCatching runs one build on the process's own signals whose
// Admit prints whether SignalsCaught was closed when it was called, then
// waits for it (at most 5 s). One P makes the order certain: the catch
// runs in a goroutine of its own. A test binary run as a background job
// starts with SIGINT ignored, which its children inherit; catching it once
// and letting it go makes the runtime count it as not ignored, as in a
// process started in a terminal.
func admitWhileCatching() int {
	runtime.GOMAXPROCS(1)
	if signal.Ignored(os.Interrupt) {
		c := make(chan os.Signal, 1)
		signal.Notify(c, os.Interrupt)
		signal.Stop(c)
	}
	return runAdmitted(func(ctx context.Context) ([]string, func(), error) {
		caught := SignalsCaught(ctx)
		select {
		case <-caught:
			fmt.Println("admitted once the signals were caught")
		default:
			fmt.Println("admitted while the signals were being caught")
		}
		select {
		case <-caught:
			return nil, func() {}, nil
		case <-time.After(5 * time.Second):
			return nil, nil, errors.New("the signals were not caught within 5 s")
		}
	})
}

// runAdmitted runs one build of a child that exits 0 on the process's own
// signals, with admit as its Config.Admit, and prints Run's outcome.
func runAdmitted(admit func(ctx context.Context) ([]string, func(), error)) int {
	g, err := New(Config{
		Endpoint: agentproto.Endpoint{Port: "4000"},
		Env:      append(os.Environ(), reexec.Env("exit")),
		Dial: func(context.Context, int) (Agent, error) {
			return newFakeAgent(), nil
		},
		Admit: admit,
	})
	if err != nil {
		return 6
	}
	code, err := g.Run(context.Background(), []string{os.Args[0], "0"})
	fmt.Println(code, err)
	return 0
}

// guardThenSignal runs one guarded build of a child that exits 0, catching
// the process's own signals (Config.Signals nil), sends itself SIGTERM once
// Run returned, and prints "survived" if it is still alive half a second
// later.
func guardThenSignal(keep bool) int {
	exe, err := os.Executable()
	if err != nil {
		return 6
	}
	g, err := New(Config{
		Endpoint:    agentproto.Endpoint{Port: "4000"},
		Env:         append(os.Environ(), reexec.Env("exit")),
		KeepSignals: keep,
		Dial: func(context.Context, int) (Agent, error) {
			return newFakeAgent(), nil
		},
	})
	if err != nil {
		return 6
	}
	if code, err := g.Run(context.Background(), []string{exe, "0"}); code != 0 || err != nil {
		fmt.Fprintln(os.Stderr, code, err)
		return 7
	}
	if err := syscall.Kill(os.Getpid(), syscall.SIGTERM); err != nil {
		fmt.Fprintln(os.Stderr, "sending SIGTERM:", err)
		return 8
	}
	time.Sleep(500 * time.Millisecond)
	fmt.Println("survived")
	return 0
}

// guardOnTerminal runs one guarded build of the child mode the way the
// command does, on the process's own stdio and signals (a pty run when
// stdout is a terminal), and prints what the agent received and the exit
// code on stderr.
func guardOnTerminal(mode string) int {
	exe, err := os.Executable()
	if err != nil {
		return 6
	}
	agent := newFakeAgent()
	g, err := New(Config{
		Endpoint: agentproto.Endpoint{Port: "4000"},
		Env:      append(os.Environ(), reexec.Env(mode)),
		Dial: func(context.Context, int) (Agent, error) {
			return agent, nil
		},
	})
	if err != nil {
		return 6
	}
	code, err := g.Run(context.Background(), []string{exe})
	fmt.Fprintf(os.Stderr, "agent=%s code=%d err=%v\n", agent.states(), code, err)
	return code
}

// panicWriter panics when written to.
type panicWriter struct{}

func (panicWriter) Write([]byte) (int, error) { panic("test panic while copying the build's output") }

// panicOnWait is a Runner whose Wait panics.
type panicOnWait struct{ Runner }

func (panicOnWait) Wait() (int, error) { panic("test panic while waiting for the build") }

// guardThenPanic runs one guarded build on a pty, with the process's stdin
// (a terminal) in raw mode, in which a goroutine other than Run's panics:
// the copy of the build's output (where "output") or the wait for it
// ("wait"). The process dies of the panic; the terminal must be restored.
func guardThenPanic(where string) int {
	exe, err := os.Executable()
	if err != nil {
		return 6
	}
	cfg := Config{
		Endpoint:  agentproto.Endpoint{Port: "4000"},
		Env:       append(os.Environ(), reexec.Env("print")),
		NewRunner: func(c Command) Runner { return NewPTYRunner(c) },
		Dial: func(context.Context, int) (Agent, error) {
			return newFakeAgent(), nil
		},
	}
	argv := []string{exe, "out", "err"}
	switch where {
	case "pipe": // pipe mode: the copy of the output of a build that has the terminal panics
		cfg.NewRunner = func(c Command) Runner { return NewExecRunner(c) }
		cfg.Env = nil
		cfg.Stdout = panicWriter{}
		argv = []string{"sh", "-c", "echo out; exec sleep 30"}
	case "output":
		cfg.Stdout = panicWriter{}
	case "wait":
		cfg.NewRunner = func(c Command) Runner { return panicOnWait{NewPTYRunner(c)} }
	}
	g, err := New(cfg)
	if err != nil {
		return 6
	}
	_, _ = g.Run(context.Background(), argv)
	return 7 // not reached: the panic ends the process
}
