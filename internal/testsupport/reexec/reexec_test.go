package reexec

import (
	"fmt"
	"os/exec"
	"strings"
	"testing"
)

func TestMain(m *testing.M) {
	Main(m, func(name string, args []string) int {
		if name != "echo" {
			return Unknown(name)
		}
		fmt.Print(strings.Join(args, ","))
		return len(args)
	})
}

// TestCommandRunsTheChild: the argv and environment of Command run the
// named child with its arguments, and its exit code is the child's; an
// unknown name fails.
func TestCommandRunsTheChild(t *testing.T) {
	t.Parallel()
	argv, env := Command(t, "echo", "a", "b")
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Env = env
	out, err := cmd.CombinedOutput()
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 2 || string(out) != "a,b" {
		t.Errorf("child: %q, %v; want a,b and exit 2", out, err)
	}
	argv, env = Command(t, "nope")
	cmd = exec.Command(argv[0], argv[1:]...)
	cmd.Env = env
	out, err = cmd.CombinedOutput()
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 99 || !strings.Contains(string(out), `no child program "nope"`) {
		t.Errorf("unknown child: %q, %v", out, err)
	}
}
