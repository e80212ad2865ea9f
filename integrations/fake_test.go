//go:build unix

package integrations

import (
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"
)

// activeEnv is the variable that marks a process as running inside a safe build.
const activeEnv = "BUILDGUARD_SAFE_BUILD_ACTIVE"

// installHint is the command that provides everything these tests run for real.
const installHint = "apt-get install -y gradle libmaven-compiler-plugin-java libmaven-resources-plugin-java libmaven-jar-plugin-java junit5"

// commandTimeout bounds every process a test starts; Gradle 4.4.1 on two cores
// needs a few seconds per invocation, a nested build about twice that.
const commandTimeout = 240 * time.Second

// fakeBuildguardScript records one invocation into a fresh file in the record
// directory and then behaves like a buildguard whose agent acknowledged
// everything: it runs the command after "--" in place of itself. With an owner
// of the form exit-N it exits with N instead, without running the command (an
// argument, not an environment variable, so that it also reaches a fake started
// by a Gradle daemon). With the owner wait-term it runs nothing and waits for
// SIGTERM: it creates <record>.ready once it is waiting and <record>.term when
// the signal came, then exits 143.
//
// A record is NUL-separated: the physical working directory, the value of
// BUILDGUARD_SAFE_BUILD_ACTIVE (or "<unset>"), whether the directory after
// --project-cache-dir existed ("yes", "no" or "none"), then every argument.
const fakeBuildguardScript = `#!/bin/sh
rec=$(mktemp RECDIR/call.XXXXXX) || exit 99
cache=none
owner=
prev=
for a do
	if [ "$prev" = --project-cache-dir ]; then
		if [ -d "$a" ]; then cache=yes; else cache=no; fi
	fi
	if [ "$prev" = --owner ]; then
		owner=$a
	fi
	prev=$a
done
if [ "$owner" = wait-term ]; then
	trap 'echo terminated >"$rec.term"; kill "$sleeper" 2>/dev/null; exit 143' TERM
fi
{
	printf '%s\0' "$(pwd -P)" "${BUILDGUARD_SAFE_BUILD_ACTIVE-<unset>}" "$cache"
	printf '%s\0' "$@"
} >"$rec"
echo 'fake-buildguard: stdout line'
echo 'fake-buildguard: stderr line' >&2
case $owner in
exit-*) exit "${owner#exit-}" ;;
wait-term)
	sleep 300 &
	sleeper=$!
	: >"$rec.ready"
	wait "$sleeper"
	exit 0
	;;
esac
while [ $# -gt 0 ]; do
	if [ "$1" = -- ]; then
		shift
		exec "$@"
	fi
	shift
done
echo 'fake-buildguard: no -- in the arguments' >&2
exit 98
`

// fakeBuildguard is a fake buildguard executable and the directory it records into.
type fakeBuildguard struct {
	exe    string
	recDir string
}

// invocation is one recorded run of the fake buildguard.
type invocation struct {
	cwd          string
	active       string
	cacheExisted string
	args         []string
}

// newFakeBuildguard writes the fake as dir/name with its own record directory.
func newFakeBuildguard(t *testing.T, dir, name string) fakeBuildguard {
	t.Helper()
	recDir := filepath.Join(dir, "records of "+name)
	if err := os.MkdirAll(recDir, 0o755); err != nil {
		t.Fatal(err)
	}
	exe := filepath.Join(dir, name)
	script := strings.Replace(fakeBuildguardScript, "RECDIR", shellQuote(recDir), 1)
	writeExecutable(t, exe, []byte(script))
	return fakeBuildguard{exe: exe, recDir: recDir}
}

// writeExecutable writes an executable file through a process of its own,
// so that no descriptor of this process ever has it open for writing: a
// child forked meanwhile by a parallel test would hold such a descriptor
// until its exec, and running the file then fails with ETXTBSY ("Text file
// busy"; golang.org/issue/22315).
func writeExecutable(t *testing.T, path string, content []byte) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), commandTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, "sh", "-c", `cat > "$1" && chmod 755 "$1"`, "sh", path)
	cmd.Stdin = bytes.NewReader(content)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("writing %s: %v\n%s", path, err, out)
	}
}

// calls returns every recorded invocation, in file-name order (not run order).
func (f fakeBuildguard) calls(t *testing.T) []invocation {
	t.Helper()
	names, err := filepath.Glob(filepath.Join(f.recDir, "call.??????"))
	if err != nil {
		t.Fatal(err)
	}
	sort.Strings(names)
	var out []invocation
	for _, n := range names {
		b, err := os.ReadFile(n)
		if err != nil {
			t.Fatal(err)
		}
		fields := strings.Split(string(b), "\x00")
		if len(fields) < 4 || fields[len(fields)-1] != "" {
			t.Fatalf("malformed record %s: %q", n, b)
		}
		fields = fields[:len(fields)-1]
		out = append(out, invocation{cwd: fields[0], active: fields[1], cacheExisted: fields[2], args: fields[3:]})
	}
	return out
}

// onlyCall asserts exactly one recorded invocation and returns it.
func (f fakeBuildguard) onlyCall(t *testing.T) invocation {
	t.Helper()
	calls := f.calls(t)
	if len(calls) != 1 {
		t.Fatalf("fake buildguard ran %d times, want exactly once: %+v", len(calls), calls)
	}
	return calls[0]
}

// reset forgets earlier invocations.
func (f fakeBuildguard) reset(t *testing.T) {
	t.Helper()
	if err := os.RemoveAll(f.recDir); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(f.recDir, 0o755); err != nil {
		t.Fatal(err)
	}
}

// writeScript writes an executable sh script.
func writeScript(t *testing.T, path, body string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	writeExecutable(t, path, []byte("#!/bin/sh\n"+body))
}

// shellQuote quotes s for sh as one word.
func shellQuote(s string) string {
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// result is what a finished command left behind.
type result struct {
	stdout, stderr string
	exit           int
}

// run runs argv in dir with the environment env (complete, not added to ours)
// and a bounded wait. A command that cannot start or times out fails the test.
func run(t *testing.T, dir string, env []string, argv ...string) result {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), commandTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	cmd.Dir = dir
	cmd.Env = env
	cmd.WaitDelay = 10 * time.Second
	var stdout, stderr bytes.Buffer
	cmd.Stdout = &stdout
	cmd.Stderr = &stderr
	err := cmd.Run()
	res := result{stdout: stdout.String(), stderr: stderr.String()}
	var exitErr *exec.ExitError
	switch {
	case ctx.Err() != nil:
		t.Fatalf("%q did not finish within %s\nstdout:\n%s\nstderr:\n%s", argv, commandTimeout, res.stdout, res.stderr)
	case errors.As(err, &exitErr):
		res.exit = exitErr.ExitCode()
	case err != nil:
		t.Fatalf("running %q: %v", argv, err)
	}
	return res
}

// baseEnv is this process's environment without the nesting marker and
// without the variables the fakes react to, plus extra.
func baseEnv(extra ...string) []string {
	var env []string
	for _, kv := range os.Environ() {
		name, _, _ := strings.Cut(kv, "=")
		switch name {
		case activeEnv, "BUILDGUARD":
			continue
		}
		env = append(env, kv)
	}
	return append(env, extra...)
}

// withPath returns env with PATH replaced by path.
func withPath(env []string, path string) []string {
	out := make([]string, 0, len(env)+1)
	for _, kv := range env {
		if !strings.HasPrefix(kv, "PATH=") {
			out = append(out, kv)
		}
	}
	return append(out, "PATH="+path)
}

// requireTool fails the test (never skips) when a real tool is missing.
func requireTool(t *testing.T, names ...string) {
	t.Helper()
	for _, n := range names {
		if _, err := exec.LookPath(n); err != nil {
			t.Fatalf("%s is required for this test and is not on PATH; install it with: %s", n, installHint)
		}
	}
}

// writeFiles writes each set of files (path relative to dir: content).
func writeFiles(t testing.TB, dir string, sets ...map[string]string) {
	t.Helper()
	for _, files := range sets {
		for name, body := range files {
			p := filepath.Join(dir, name)
			if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
}

// realDir resolves symlinks so paths compare with what `pwd -P` reports.
func realDir(t *testing.T, dir string) string {
	t.Helper()
	r, err := filepath.EvalSymlinks(dir)
	if err != nil {
		t.Fatal(err)
	}
	return r
}
