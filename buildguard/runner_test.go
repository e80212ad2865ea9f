//go:build unix

package buildguard

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/buildguard/buildguard/internal/proc"
	"github.com/buildguard/buildguard/internal/testsupport/reexec"
	"github.com/buildguard/buildguard/internal/testsupport/wait"
)

func devNull(t testing.TB) *os.File {
	t.Helper()
	f, err := os.Open(os.DevNull)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	return f
}

func runExec(t *testing.T, c Command) (int, error) {
	t.Helper()
	r := NewExecRunner(c)
	defer r.Close()
	if err := r.Start(); err != nil {
		return 0, err
	}
	return r.Wait()
}

func TestExecRunnerPassesOutputUnchangedAndTranscribes(t *testing.T) {
	t.Parallel()
	argv, env := reexec.Command(t, "print", "out\x1b[1m line\n", "err line\r\n")
	var stdout, stderr, transcript bytes.Buffer
	code, err := runExec(t, Command{Argv: argv, Env: env, Stdin: devNull(t), Stdout: &stdout, Stderr: &stderr, Transcript: &transcript})
	if err != nil || code != 0 {
		t.Fatalf("Run = %d, %v; want 0, nil", code, err)
	}
	if got, want := stdout.String(), "out\x1b[1m line\n"; got != want {
		t.Errorf("stdout = %q, want %q", got, want)
	}
	if got, want := stderr.String(), "err line\r\n"; got != want {
		t.Errorf("stderr = %q, want %q", got, want)
	}
	tr := transcript.String()
	if !strings.Contains(tr, "out\x1b[1m line\n") || !strings.Contains(tr, "err line\r\n") || len(tr) != stdout.Len()+stderr.Len() {
		t.Errorf("transcript = %q, want both streams", tr)
	}
}

func TestExecRunnerArgvIsNotInterpreted(t *testing.T) {
	t.Parallel()
	args := []string{"a b", "; $(touch x)", "*", "", "'q'"}
	argv, env := reexec.Command(t, "args", args...)
	var stdout bytes.Buffer
	if code, err := runExec(t, Command{Argv: argv, Env: env, Stdin: devNull(t), Stdout: &stdout, Dir: t.TempDir()}); err != nil || code != 0 {
		t.Fatalf("Run = %d, %v", code, err)
	}
	var want strings.Builder
	for _, a := range args {
		want.WriteString(strconv.Quote(a) + "\n")
	}
	if stdout.String() != want.String() {
		t.Errorf("child saw\n%s\nwant\n%s", stdout.String(), want.String())
	}
}

func TestExecRunnerExitCodes(t *testing.T) {
	t.Parallel()
	argv, env := reexec.Command(t, "exit", "7")
	if code, err := runExec(t, Command{Argv: argv, Env: env, Stdin: devNull(t)}); err != nil || code != 7 {
		t.Errorf("exit 7: got %d, %v", code, err)
	}
	if code, err := runExec(t, Command{Argv: []string{"sh", "-c", "kill -TERM $$"}, Stdin: devNull(t)}); err != nil || code != 128+int(syscall.SIGTERM) {
		t.Errorf("killed by SIGTERM: got %d, %v; want 143", code, err)
	}
}

func TestExecRunnerCannotRun(t *testing.T) {
	t.Parallel()
	for _, argv := range [][]string{{"buildguard-no-such-command"}, {filepath.Join(t.TempDir(), "missing")}} {
		_, err := runExec(t, Command{Argv: argv, Stdin: devNull(t)})
		if !errors.Is(err, ErrCannotRun) {
			t.Errorf("%v: err = %v, want ErrCannotRun", argv, err)
		}
	}
}

// A failed build's leftovers are killed at once; the code is the child's.
func TestExecRunnerKillsLeftoversAfterFailure(t *testing.T) {
	t.Parallel()
	pidFile := filepath.Join(t.TempDir(), "pids")
	argv := []string{"sh", "-c", `sleep 300 & echo $! > "$1.tmp"; mv "$1.tmp" "$1"; exit 3`, "sh", pidFile}
	if code, err := runExec(t, Command{Argv: argv, Stdin: devNull(t)}); err != nil || code != 3 {
		t.Fatalf("Wait = %d, %v; want 3, nil", code, err)
	}
	wait.Gone(t, 10*time.Second, wait.PIDFile(t, 20*time.Second, pidFile)[0])
}

// A child that exits 0 while a process of its group still runs is not a
// finished build (docs/decisions.md#D12): after the grace period the process
// is killed and Wait reports it.
func TestExecRunnerStragglerFailsTheBuild(t *testing.T) {
	t.Parallel()
	pidFile := filepath.Join(t.TempDir(), "pids")
	argv := []string{"sh", "-c", `sleep 300 & echo $! > "$1.tmp"; mv "$1.tmp" "$1"`, "sh", pidFile}
	code, err := runExec(t, Command{Argv: argv, Stdin: devNull(t), Grace: 100 * time.Millisecond})
	var se *StragglersError
	if !errors.As(err, &se) || se.N != 1 || code != 0 {
		t.Fatalf("Wait = %d, %v; want 0 and 1 straggler", code, err)
	}
	if want := "1 processes of the build were still running after it exited"; err.Error() != want {
		t.Errorf("error = %q, want %q", err, want)
	}
	wait.Gone(t, 10*time.Second, wait.PIDFile(t, 20*time.Second, pidFile)[0])
}

// A process of the group that ends within the grace period is waited for:
// what it writes is part of the build. Without a grace period the same
// build fails, which proves the wait.
func TestExecRunnerWaitsForTheGroupWithinGrace(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		grace time.Duration
		ok    bool
	}{{-1, false}, {20 * time.Second, true}} {
		marker := filepath.Join(t.TempDir(), "marker")
		argv := []string{"sh", "-c", `(sleep 0.3; touch "$1") & exit 0`, "sh", marker}
		code, err := runExec(t, Command{Argv: argv, Stdin: devNull(t), Grace: tc.grace})
		_, statErr := os.Stat(marker)
		switch {
		case tc.ok && (code != 0 || err != nil || statErr != nil):
			t.Errorf("grace %v: Wait = %d, %v, marker: %v; want ok with the marker written", tc.grace, code, err, statErr)
		case !tc.ok && !errors.As(err, new(*StragglersError)):
			t.Errorf("grace %v: Wait = %d, %v; want a straggler", tc.grace, code, err)
		}
	}
}

// A process that left the group (setsid, as a Gradle daemon does) is outside
// the promise: it is neither waited for nor killed.
func TestExecRunnerSetsidIsNotAStraggler(t *testing.T) {
	t.Parallel()
	pidFile := filepath.Join(t.TempDir(), "pid")
	argv := []string{"sh", "-c", `setsid sleep 300 & echo $! > "$1.tmp"; mv "$1.tmp" "$1"`, "sh", pidFile}
	// A grace period, because the process leaves the group only once setsid
	// runs; counted, it would never end within it.
	code, err := runExec(t, Command{Argv: argv, Stdin: devNull(t), Grace: 10 * time.Second})
	pid := wait.PIDFile(t, 20*time.Second, pidFile)[0]
	defer syscall.Kill(pid, syscall.SIGKILL)
	if code != 0 || err != nil {
		t.Fatalf("Wait = %d, %v; want 0, nil", code, err)
	}
	if proc.Gone(pid) {
		t.Errorf("the process that left the group (pid %d) was killed", pid)
	}
}

func TestExecRunnerSignalReachesGroupAndKillIsIdempotent(t *testing.T) {
	t.Parallel()
	pidFile := filepath.Join(t.TempDir(), "pids")
	argv, env := reexec.Command(t, "sleeper", pidFile, "ignore")
	r := NewExecRunner(Command{Argv: argv, Env: env, Stdin: devNull(t)})
	defer r.Close()
	if err := r.Start(); err != nil {
		t.Fatal(err)
	}
	pids := wait.PIDFile(t, 20*time.Second, pidFile)
	child, grandchild := pids[0], pids[1]
	// The child ignores SIGTERM, the grandchild (sleep) dies of it.
	if err := r.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	wait.Gone(t, 10*time.Second, grandchild)
	if proc.Gone(child) {
		t.Fatal("the child ignoring SIGTERM is gone")
	}
	for range 2 {
		if err := r.Kill(); err != nil {
			t.Fatal(err)
		}
	}
	if code, err := r.Wait(); err != nil || code != 128+int(syscall.SIGKILL) {
		t.Errorf("Wait = %d, %v; want 137", code, err)
	}
	if err := r.Kill(); err != nil {
		t.Errorf("Kill after Wait: %v", err)
	}
	if err := r.Signal(syscall.SIGTERM); err != nil {
		t.Errorf("Signal after Wait: %v", err)
	}
}

// The input copy passes every byte on except the keys it acts on, calling
// their functions in the order the keys were typed.
func TestCopyInputActsOnKeysInOrder(t *testing.T) {
	t.Parallel()
	var got []string
	var out bytes.Buffer
	keys := map[byte]func(){
		3:  func() { got = append(got, "intr@"+out.String()) },
		26: func() { got = append(got, "susp@"+out.String()) },
	}
	if err := copyInput(&out, []byte("ab\x03c\x1a\x1ad\x03"), keys); err != nil {
		t.Fatal(err)
	}
	if out.String() != "abcd" {
		t.Errorf("copied %q, want %q", out.String(), "abcd")
	}
	want := []string{"intr@ab", "susp@abc", "susp@abc", "intr@abcd"}
	if strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("keys acted on as %v, want %v", got, want)
	}
	out.Reset()
	if err := copyInput(&out, []byte("plain"), nil); err != nil || out.String() != "plain" {
		t.Errorf("without keys: copied %q, %v", out.String(), err)
	}
}

// TestExecRunnerOneWriterKeepsTheOrder: with Stdout and Stderr the same
// writer, the child's two streams arrive in the order it wrote them (one
// pipe, as on a terminal), which two pipes cannot promise.
func TestExecRunnerOneWriterKeepsTheOrder(t *testing.T) {
	t.Parallel()
	var out bytes.Buffer
	script := `i=0; while [ $i -lt 300 ]; do echo "out $i"; echo "err $i" >&2; i=$((i+1)); done`
	if code, err := runExec(t, Command{Argv: []string{"sh", "-c", script}, Stdin: devNull(t), Stdout: &out, Stderr: &out}); err != nil || code != 0 {
		t.Fatalf("Run = %d, %v", code, err)
	}
	var want strings.Builder
	for i := range 300 {
		fmt.Fprintf(&want, "out %d\nerr %d\n", i, i)
	}
	if out.String() != want.String() {
		t.Errorf("the streams were reordered:\n%s", out.String())
	}
}
