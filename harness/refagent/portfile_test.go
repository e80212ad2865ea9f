package refagent_test

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestPortFileSymlinkIsRefused: the agent never writes through a symlinked
// port file, keeps serving, and does not delete the link on shutdown.
func TestPortFileSymlinkIsRefused(t *testing.T) {
	t.Parallel()
	var target string
	f := startAppWith(t, func(f *fixture) {
		target = filepath.Join(f.root, "elsewhere.txt")
		if err := os.WriteFile(target, []byte("keep me"), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink(target, f.portFile); err != nil {
			t.Fatal(err)
		}
	})
	f.log.waitFor(t, 0, "refusing the symlinked port file", func(s string) bool {
		return strings.Contains(s, "WARN Port file is a symlink \u2014 refusing to write: "+f.portFile)
	})
	i := f.log.waitFor(t, 0, "naming the status port", func(s string) bool {
		return strings.Contains(s, "] Status server listening on 127.0.0.1:")
	})
	port := regexp.MustCompile(`127\.0\.0\.1:([0-9]+)`).FindStringSubmatch(f.log.since(i)[0])[1]
	c := handshake(t, port)
	c.request("DOCTOR d1", "DOCTOR_RESULT d1 ")

	f.terminate(t)
	if b, err := os.ReadFile(target); err != nil || string(b) != "keep me" {
		t.Errorf("symlink target = %q, %v; want it untouched", b, err)
	}
	if fi, err := os.Lstat(f.portFile); err != nil || fi.Mode()&os.ModeSymlink == 0 {
		t.Errorf("the symlinked port file was removed or replaced: %v", err)
	}
}
