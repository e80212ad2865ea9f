//go:build unix

package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"regexp"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/buildguard/buildguard/internal/proc"
	"github.com/buildguard/buildguard/internal/testsupport/wait"

	"github.com/buildguard/buildguard/agentproto"
	"github.com/buildguard/buildguard/harness/fakeagent"
	"github.com/rogpeppe/go-internal/testscript"
)

func TestMain(m *testing.M) {
	commands := map[string]func(){
		"buildguard": main,
		"fakeagent":  func() { os.Exit(fakeagent.Main(os.Args[1:])) },
		"expectcode": expectCodeMain,
	}
	if _, isCommand := commands[filepath.Base(os.Args[0])]; !isCommand {
		defaultSignalsForChildren()
	}
	testscript.Main(m, commands)
}

// defaultSignalsForChildren gives every process the tests start the default
// SIGHUP and SIGINT, whatever this test binary inherited. Under nohup
// (SIGHUP ignored) or as a background job of a non-interactive shell
// (SIGINT ignored) the ignore passes to every child, so a script that
// signals a build would wait for a signal that never acts. A caught signal,
// unlike an ignored one, is default again in a child after exec. A script
// that needs an ignored signal sets it up itself (nohup.txtar runs nohup).
func defaultSignalsForChildren() {
	for _, s := range []os.Signal{syscall.SIGHUP, syscall.SIGINT} {
		if signal.Ignored(s) {
			signal.Notify(make(chan os.Signal, 1), s)
		}
	}
}

// scriptBudget bounds a directory of transcripts: a step still waiting
// then (a background command that never ends, a build that never stops)
// fails with testscript's message, well before the package's own timeout.
const scriptBudget = 5 * time.Minute

// TestWrapScripts runs the wrapper transcripts in testdata/wrap against the
// fake agent, each asserting the exit code, stderr and what the agent got.
func TestWrapScripts(t *testing.T) {
	t.Parallel()
	testscript.Run(t, scriptParams("testdata/wrap", map[string]func(ts *testscript.TestScript, neg bool, args []string){
		"code":     cmdCode,
		"waitfile": cmdWaitFile,
		"signal":   cmdSignal,
		"gone":     cmdGone,
		"running":  cmdRunning,
		"ptyrun":   cmdPtyrun,
		"hold":     cmdHold,
	}))
}

// scriptParams runs the transcripts in dir with the extra commands, each
// script starting from the default logging (level warn, text) whatever the
// environment of the test run says.
func scriptParams(dir string, cmds map[string]func(ts *testscript.TestScript, neg bool, args []string)) testscript.Params {
	return testscript.Params{
		Dir:      dir,
		Deadline: time.Now().Add(scriptBudget),
		Setup: func(env *testscript.Env) error {
			env.Setenv("BUILDGUARD_LOG_LEVEL", "")
			env.Setenv("BUILDGUARD_LOG_FORMAT", "")
			return nil
		},
		Cmds: cmds,
	}
}

// code N PROG [ARG...]: runs PROG like exec and requires exit code N.
func cmdCode(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) < 2 {
		ts.Fatalf("usage: code N PROG [ARG...]")
	}
	want, err := strconv.Atoi(args[0])
	if err != nil {
		ts.Fatalf("code: %v", err)
	}
	err = ts.Exec(args[1], args[2:]...)
	got := 0
	var ee *exec.ExitError
	switch {
	case errors.As(err, &ee):
		got = ee.ExitCode()
	case err != nil:
		ts.Fatalf("code: %v", err)
	}
	if got != want {
		ts.Fatalf("exit code %d, want %d", got, want)
	}
}

// waitfile PATH [PATTERN]: waits (up to 30 s) for PATH to exist and, with
// PATTERN, to contain a line matching it.
func cmdWaitFile(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) < 1 || len(args) > 2 {
		ts.Fatalf("usage: waitfile PATH [PATTERN]")
	}
	var re *regexp.Regexp
	if len(args) == 2 {
		re = regexp.MustCompile("(?m)" + args[1])
	}
	path := ts.MkAbs(args[0])
	if !wait.Until(30*time.Second, func() bool {
		b, err := os.ReadFile(path)
		return err == nil && (re == nil || re.Match(b))
	}) {
		ts.Fatalf("%s did not appear (or match %v)", args[0], re)
	}
}

// hold PORTFILE none|named|legacy: waits (up to 10 s) until the agent reports
// that hold state (RELOAD status); the acceptance of BUILD ok is asynchronous.
func cmdHold(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 2 {
		ts.Fatalf("usage: hold PORTFILE none|named|legacy")
	}
	port, err := agentproto.Endpoint{PortFile: ts.MkAbs(args[0])}.Resolve()
	ts.Check(err)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	c, err := agentproto.Dial(ctx, port)
	ts.Check(err)
	defer c.Close()
	last := ""
	for ctx.Err() == nil {
		st, err := c.Reload(ctx, agentproto.ReloadStatus)
		ts.Check(err)
		if last = st.BuildHold; last == args[1] {
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
	ts.Fatalf("agent hold is %s, want %s", last, args[1])
}

// readPid reads a pid file, waiting (up to 30 s) for it to appear: expectcode
// writes its file only once PROG has started, so PROG (and what it starts) may
// show itself before the file is there. Pid files are written whole (renamed
// into place).
func readPid(ts *testscript.TestScript, file string) int {
	pids, err := wait.PIDFileWithin(ts.MkAbs(file), 30*time.Second)
	if err != nil || len(pids) != 1 {
		ts.Fatalf("%s: %v %v", file, pids, err)
	}
	return pids[0]
}

// signal INT|TERM|HUP|QUIT|KILL PIDFILE: sends the signal to the process in PIDFILE.
func cmdSignal(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 2 {
		ts.Fatalf("usage: signal INT|TERM|HUP|QUIT|KILL PIDFILE")
	}
	sig := map[string]syscall.Signal{"INT": syscall.SIGINT, "TERM": syscall.SIGTERM, "HUP": syscall.SIGHUP, "QUIT": syscall.SIGQUIT, "KILL": syscall.SIGKILL}[args[0]]
	if sig == 0 {
		ts.Fatalf("signal: unknown signal %s", args[0])
	}
	ts.Check(syscall.Kill(readPid(ts, args[1]), sig))
}

// gone PIDFILE...: waits (up to 10 s) until every process named runs no more
// (it is absent, or a zombie left for its new parent to collect).
func cmdGone(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) == 0 {
		ts.Fatalf("usage: gone PIDFILE...")
	}
	for _, f := range args {
		pid := readPid(ts, f)
		if left := wait.GoneWithin(10*time.Second, pid); len(left) > 0 {
			ts.Fatalf("process %d (%s) still runs", pid, f)
		}
	}
}

// running PIDFILE...: requires every process named to run now.
func cmdRunning(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) == 0 {
		ts.Fatalf("usage: running PIDFILE...")
	}
	for _, f := range args {
		if pid := readPid(ts, f); proc.Gone(pid) {
			ts.Fatalf("process %d (%s) does not run", pid, f)
		}
	}
}

// expectCodeMain is `expectcode [-pidfile FILE] N PROG [ARG...]`: it runs PROG with our stdio
// and exits 0 when PROG exits N, 1 otherwise. Scripts use it for background
// runs, whose exit code testscript cannot check.
// expectCodeLimit bounds PROG: one that still runs then is killed and the
// step fails, saying so.
const expectCodeLimit = 2 * time.Minute

func expectCodeMain() {
	if len(os.Args) < 3 {
		fmt.Fprintln(os.Stderr, "usage: expectcode N PROG [ARG...]")
		os.Exit(2)
	}
	args := os.Args[1:]
	pidFile := ""
	if len(args) > 2 && args[0] == "-pidfile" {
		pidFile, args = args[1], args[2:]
	}
	want, _ := strconv.Atoi(args[0])
	// The signals of the test go to PROG through its pid file; this process
	// must survive testscript's end-of-test interrupt until PROG is done.
	signal.Ignore(syscall.SIGINT)
	// A pid file left by an earlier run of the script goes before PROG
	// starts, so that the script never signals or waits for that old pid.
	if pidFile != "" {
		os.Remove(pidFile)
	}
	cmd := exec.Command(args[1], args[2:]...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	err := cmd.Start()
	if err == nil && pidFile != "" {
		os.WriteFile(pidFile+".tmp", []byte(strconv.Itoa(cmd.Process.Pid)), 0o644)
		os.Rename(pidFile+".tmp", pidFile)
	}
	if err == nil {
		// A script's `wait` for this process has no bound of its own.
		exited := make(chan error, 1)
		go func() { exited <- cmd.Wait() }()
		select {
		case err = <-exited:
		case <-time.After(expectCodeLimit):
			cmd.Process.Kill()
			<-exited
			fmt.Fprintf(os.Stderr, "expectcode: %s still ran after %s; killed it\n", args[1], expectCodeLimit)
			os.Exit(1)
		}
	}
	got := 0
	var ee *exec.ExitError
	switch {
	case errors.As(err, &ee):
		got = ee.ExitCode()
		if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			got = 128 + int(ws.Signal())
		}
	case err != nil:
		fmt.Fprintln(os.Stderr, "expectcode:", err)
		os.Exit(1)
	}
	if got != want {
		fmt.Fprintf(os.Stderr, "expectcode: exit code %d, want %d\n", got, want)
		os.Exit(1)
	}
	os.Exit(0)
}
