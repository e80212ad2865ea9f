//go:build unix

package buildguard_test

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/buildguard/buildguard/agentproto"
	"github.com/buildguard/buildguard/buildguard"
	"github.com/buildguard/buildguard/harness/fakeagent"
)

// A guarded build: the hold is taken before the command runs, and released
// (BUILD ok) because it exited 0.
func ExampleGuard_Run() {
	dir, err := os.MkdirTemp("", "buildguard-example")
	if err != nil {
		fmt.Println(err)
		return
	}
	defer os.RemoveAll(dir)
	agent, err := fakeagent.Start(fakeagent.Config{PortFile: filepath.Join(dir, "agent.port")})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer agent.Close()

	g, err := buildguard.New(buildguard.Config{
		Endpoint: agentproto.Endpoint{PortFile: agent.PortFile()},
		Owner:    "ci-build-42",
		Stderr:   io.Discard, // the owner line (and the command's stderr)
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	code, err := g.Run(context.Background(), []string{"echo", "compiled"})
	fmt.Println(code, err)
	for _, line := range agent.Commands() {
		f := strings.Fields(line) // BUILD <state> request=<fresh token> owner=<owner>
		fmt.Println(f[0], f[1], f[3])
	}
	// Output:
	// compiled
	// 0 <nil>
	// BUILD started owner=ci-build-42
	// BUILD ok owner=ci-build-42
}
