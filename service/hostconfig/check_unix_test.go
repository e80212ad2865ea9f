//go:build unix

package hostconfig

import (
	"os"
	"path/filepath"
	"testing"
)

// --check finds a bare command as the host's spawn does: in the PATH the
// server gets (the entry's env wins), a relative directory of it taken from
// the server's working directory, skipping what is not an executable file.
func TestHostLookPathAsTheHostSpawns(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	for _, f := range []struct {
		path string
		mode os.FileMode
	}{{"plain/buildguard", 0o644}, {"tools/buildguard", 0o755}} {
		p := filepath.Join(dir, "project", f.path)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, nil, f.mode); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.MkdirAll(filepath.Join(dir, "project", "dir", "buildguard"), 0o755); err != nil {
		t.Fatal(err)
	}
	project := filepath.Join(dir, "project")
	got, err := hostLookPath("buildguard", "dir:plain:tools", project)
	if want := filepath.Join(project, "tools", "buildguard"); err != nil || got != want {
		t.Errorf("hostLookPath = %q, %v; want %q", got, err, want)
	}
	if got, err := hostLookPath("buildguard", "/nonexistent:plain", project); err == nil {
		t.Errorf("hostLookPath found %q, want not found", got)
	}
	if got := lastValue([]string{"PATH=/a", "X=1", "PATH=/b"}, "PATH"); got != "/b" {
		t.Errorf("lastValue = %q, want the entry's /b", got)
	}
}
