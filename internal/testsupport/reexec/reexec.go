// Package reexec runs the test binary again as a child program — a fake
// build, a process that starts others, a guarded build on its own signals —
// the way conventions habit 8 asks for fakes: a real process, no mock. A
// package's TestMain hands Main its child programs; a test asks Command for
// the argv and environment that run one.
//
// It is a test-only helper: product code never imports it
// (internal/repocheck/importcheck).
package reexec

import (
	"fmt"
	"os"
	"testing"
)

// Variable names, in a child's environment, the child program the test
// binary runs as.
const Variable = "BUILDGUARD_TEST_CHILD"

// Main runs the child program the environment names, passing it its name
// and the arguments after the binary, and exits with its code; without
// one, it runs the package's tests.
func Main(m *testing.M, child func(name string, args []string) int) {
	if name := os.Getenv(Variable); name != "" {
		os.Exit(child(name, os.Args[1:]))
	}
	os.Exit(m.Run())
}

// Env is the environment entry that makes the test binary run as child
// name: for an environment a test assembles itself.
func Env(name string) string { return Variable + "=" + name }

// Binary is the test binary, a child's argv[0].
func Binary(t testing.TB) string {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatalf("finding the test binary: %v", err)
	}
	return exe
}

// Command returns the argv and environment that run the test binary as
// child name with args: the process's environment plus Env(name).
func Command(t testing.TB, name string, args ...string) (argv, env []string) {
	t.Helper()
	return append([]string{Binary(t)}, args...), append(os.Environ(), Env(name))
}

// Unknown is what a child dispatcher returns for a name it has no program
// for, after saying so on stderr.
func Unknown(name string) int {
	fmt.Fprintf(os.Stderr, "reexec: no child program %q\n", name)
	return 99
}
