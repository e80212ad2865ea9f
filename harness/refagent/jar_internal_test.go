package refagent

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// TestWriteJarIsDeterministic: the same class tree gives the same jar bytes
// even when file times and creation order differ.
func TestWriteJarIsDeterministic(t *testing.T) {
	t.Parallel()
	manifest := []byte("Manifest-Version: 1.0\n")
	build := func(order []string, mtime time.Time) []byte {
		dir := t.TempDir()
		for _, name := range order {
			p := filepath.Join(dir, filepath.FromSlash(name))
			if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(p, []byte("bytes of "+name), 0o644); err != nil {
				t.Fatal(err)
			}
			if err := os.Chtimes(p, mtime, mtime); err != nil {
				t.Fatal(err)
			}
		}
		f, err := os.Create(filepath.Join(t.TempDir(), "x.jar"))
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		if err := writeJar(f, manifest, dir); err != nil {
			t.Fatal(err)
		}
		b, err := os.ReadFile(f.Name())
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	a := build([]string{"p/A.class", "p/q/B$1.class", "Z.class"}, time.Date(2020, 1, 2, 3, 4, 5, 0, time.UTC))
	b := build([]string{"Z.class", "p/q/B$1.class", "p/A.class"}, time.Date(2024, 6, 7, 8, 9, 10, 0, time.UTC))
	if !bytes.Equal(a, b) {
		t.Errorf("jar bytes depend on file times or creation order (%d vs %d bytes)", len(a), len(b))
	}
}
