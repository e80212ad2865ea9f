package main

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/buildguard/buildguard/harness/fakeagent"
)

// TestCommandServesUntilStdinCloses builds the command as `go run` would and
// runs it as a separate process: it writes its port file, stops when its
// standard input closes, removes the port file and reports what it accepted.
func TestCommandServesUntilStdinCloses(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	dir := t.TempDir()
	bin := filepath.Join(dir, "fakeagent")
	if out, err := exec.CommandContext(ctx, "go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	pf := filepath.Join(dir, "agent.port")
	cmd := exec.CommandContext(ctx, bin, "-stdin", "-portfile", pf, "-heartbeat", "0")
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()
	wctx, wcancel := context.WithTimeout(ctx, 30*time.Second)
	defer wcancel()
	if _, err := fakeagent.WaitPortFile(wctx, pf); err != nil {
		t.Fatalf("%v; stderr: %s", err, stderr.String())
	}
	stdin.Close()
	if err := cmd.Wait(); err != nil {
		t.Fatalf("fakeagent: %v; stderr: %s", err, stderr.String())
	}
	if got := stdout.String(); got != "accepted=0\n" {
		t.Errorf("stdout %q, want accepted=0", got)
	}
	if _, err := os.Stat(pf); !os.IsNotExist(err) {
		t.Errorf("port file left behind: %v", err)
	}
}
