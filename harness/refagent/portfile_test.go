package refagent_test

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestSymlinkedPortFileStartupWindowAndDoctorBound: the agent never writes through a symlinked
// port file, keeps serving, and does not delete the link on shutdown. The same
// JVM shows the watcher's start-up window and, running in a working directory
// longer than 512 chars, DOCTOR's bounded "unavailable" answer.
func TestSymlinkedPortFileStartupWindowAndDoctorBound(t *testing.T) {
	t.Parallel()
	var target string
	longDir := filepath.Join(t.TempDir(), strings.Repeat("w", 200), strings.Repeat("x", 200), strings.Repeat("y", 200))
	if err := os.MkdirAll(longDir, 0o755); err != nil {
		t.Fatal(err)
	}
	f := startAppWith(t, appConfig{startupDelaySec: 300, workDir: longDir, prepare: func(f *fixture) {
		target = filepath.Join(f.root, "elsewhere.txt")
		if err := os.WriteFile(target, []byte("keep me"), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink(target, f.portFile); err != nil {
			t.Fatal(err)
		}
	}})
	f.log.waitFor(t, 0, "refusing the symlinked port file", func(s string) bool {
		return strings.Contains(s, "WARN Port file is a symlink \u2014 refusing to write: "+f.portFile)
	})
	i := f.log.waitFor(t, 0, "naming the status port", func(s string) bool {
		return strings.Contains(s, "] Status server listening on 127.0.0.1:")
	})
	port := regexp.MustCompile(`127\.0\.0\.1:([0-9]+)`).FindStringSubmatch(f.log.since(i)[0])[1]
	c := handshake(t, port)

	// Before the watcher registers, HEALTH says so.
	c.send("HEALTH")
	c.await("The watcher is starting; no directories are registered yet.")

	// Evidence that would break DOCTOR's 512-char string bound is replaced by
	// the bounded unavailable object.
	body := c.request("DOCTOR d1", "DOCTOR_RESULT d1 ")
	if want := `{"requestId":"d1","status":"unavailable","detail":"Doctor evidence unavailable or exceeds bounded message size"}`; body != want {
		t.Errorf("DOCTOR with a %d-char working directory = %s, want %s", len(longDir), body, want)
	}

	f.terminate(t)
	if b, err := os.ReadFile(target); err != nil || string(b) != "keep me" {
		t.Errorf("symlink target = %q, %v; want it untouched", b, err)
	}
	if fi, err := os.Lstat(f.portFile); err != nil || fi.Mode()&os.ModeSymlink == 0 {
		t.Errorf("the symlinked port file was removed or replaced: %v", err)
	}
}
