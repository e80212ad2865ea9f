package release

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

func TestFileName(t *testing.T) {
	t.Parallel()
	if got := FileName("v1.2.3", Target{"windows", "arm64"}); got != "buildguard-v1.2.3-windows-arm64.exe" {
		t.Errorf("windows name = %q", got)
	}
	if got := FileName("dev", Target{"darwin", "amd64"}); got != "buildguard-dev-darwin-amd64" {
		t.Errorf("darwin name = %q", got)
	}
}

func TestBuildRejectsUnsafeVersion(t *testing.T) {
	t.Parallel()
	out := t.TempDir()
	_, err := Build(context.Background(), Config{Version: "1.0 -X main.evil=1", OutDir: out, Dir: moduleRoot(t)})
	if !errors.Is(err, ErrInvalidVersion) {
		t.Fatalf("err = %v, want ErrInvalidVersion", err)
	}
	if entries, _ := os.ReadDir(out); len(entries) != 0 {
		t.Errorf("a rejected version still wrote %d files", len(entries))
	}
}

// TestBuildSidecarVerifiesAfterMove builds the host target, moves the binary
// and its sidecar to another dir, and checks them there with sha256sum -c;
// then runs the binary to see the linked version.
func TestBuildSidecarVerifiesAfterMove(t *testing.T) {
	t.Parallel()
	sha256sum, err := exec.LookPath("sha256sum")
	if err != nil {
		t.Fatalf("sha256sum is needed for this test (coreutils): %v", err)
	}
	host := Target{runtime.GOOS, runtime.GOARCH}
	arts, err := Build(context.Background(), Config{
		Version: "v0.0.0-test", OutDir: t.TempDir(), Dir: moduleRoot(t), Targets: []Target{host},
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(arts) != 1 {
		t.Fatalf("built %d artifacts, want 1", len(arts))
	}
	a := arts[0]
	if filepath.Base(a.Path) != FileName("v0.0.0-test", host) {
		t.Errorf("artifact %s", a.Path)
	}
	sidecar, err := os.ReadFile(a.Sidecar)
	if err != nil {
		t.Fatal(err)
	}
	if want := a.SHA256 + "  " + filepath.Base(a.Path) + "\n"; string(sidecar) != want {
		t.Errorf("sidecar = %q, want %q (only the file name, no dir)", sidecar, want)
	}
	moved := t.TempDir()
	for _, p := range []string{a.Path, a.Sidecar} {
		if err := os.Rename(p, filepath.Join(moved, filepath.Base(p))); err != nil {
			t.Fatal(err)
		}
	}
	check := exec.Command(sha256sum, "-c", filepath.Base(a.Sidecar))
	check.Dir = moved
	if out, err := check.CombinedOutput(); err != nil {
		t.Fatalf("sha256sum -c after the move: %v\n%s", err, out)
	}
	bin := filepath.Join(moved, filepath.Base(a.Path))
	out, err := exec.Command(bin, "version").CombinedOutput()
	if err != nil {
		t.Fatalf("%s version: %v\n%s", bin, err, out)
	}
	if !strings.Contains(string(out), "v0.0.0-test") {
		t.Errorf("version output %q lacks the linked version", out)
	}
	// A tampered binary must fail the same check.
	f, err := os.OpenFile(bin, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.Write([]byte{0})
	f.Close()
	check = exec.Command(sha256sum, "-c", filepath.Base(a.Sidecar))
	check.Dir = moved
	if err := check.Run(); err == nil {
		t.Error("sha256sum -c accepted a modified binary")
	}
}

func TestDescribeVersionOutsideGit(t *testing.T) {
	t.Parallel()
	if got := DescribeVersion(context.Background(), t.TempDir()); got != "dev" {
		t.Errorf("DescribeVersion outside a repository = %q, want dev", got)
	}
}

// moduleRoot is the repository root (two levels above this package).
func moduleRoot(t *testing.T) string {
	t.Helper()
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(root, "go.mod")); err != nil {
		t.Fatalf("no go.mod at %s: %v", root, err)
	}
	return root
}
