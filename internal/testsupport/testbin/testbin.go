// Package testbin builds the buildguard command for tests and benchmarks
// that run it as a separate process.
package testbin

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// Build builds cmd/buildguard as it ships, statically linked without cgo,
// into dir/buildguard and returns that path. It fails tb when the build
// fails. Start-up time depends on the linking, so benchmarks measure only
// a binary built this way.
func Build(tb testing.TB, dir string) string {
	tb.Helper()
	bin := filepath.Join(dir, "buildguard")
	cmd := exec.Command("go", "build", "-o", bin, "github.com/buildguard/buildguard/cmd/buildguard")
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := cmd.CombinedOutput(); err != nil {
		tb.Fatalf("go build buildguard: %v\n%s", err, out)
	}
	return bin
}
