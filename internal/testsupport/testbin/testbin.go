// Package testbin builds the buildguard command for tests and benchmarks
// that run it as a separate process.
package testbin

import (
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"testing"
)

// Build builds cmd/buildguard as it ships, statically linked without cgo,
// into dir/buildguard and returns that path. It fails tb when the build
// fails. Start-up time depends on the linking, so benchmarks measure only
// a binary built this way.
func Build(tb testing.TB, dir string) string {
	tb.Helper()
	return BuildPackage(tb, dir, "github.com/buildguard/buildguard/cmd/buildguard")
}

// BuildPackage builds the main package pkg with the flags of a release
// (CGO_ENABLED=0, -trimpath, -ldflags "-s -w"; harness/release) into
// dir/<last element of pkg> and returns that path. It fails tb when the
// build fails.
func BuildPackage(tb testing.TB, dir, pkg string) string {
	tb.Helper()
	bin := filepath.Join(dir, path.Base(pkg))
	cmd := exec.Command("go", "build", "-trimpath", "-ldflags", "-s -w", "-o", bin, pkg)
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := cmd.CombinedOutput(); err != nil {
		tb.Fatalf("go build %s: %v\n%s", pkg, err, out)
	}
	return bin
}
