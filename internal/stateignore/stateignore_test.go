package stateignore

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
)

// TestCreate: a new state directory gets a .gitignore holding "*" and
// nothing else; a .gitignore that exists (the user's file, or a symlink to
// a file elsewhere) is left as it is and nothing is written through it; a
// state directory that is a symlink gets nothing.
func TestCreate(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	if err := Create(dir); err != nil {
		t.Fatal(err)
	}
	if data, err := os.ReadFile(filepath.Join(dir, Name)); err != nil || string(data) != Content {
		t.Errorf(".gitignore %q, %v; want %q", data, err, Content)
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 1 {
		t.Errorf("%d entries, want the .gitignore alone", len(entries))
	}

	users := t.TempDir()
	os.WriteFile(filepath.Join(users, Name), []byte("mine\n"), 0o600)
	if err := Create(users); err != nil {
		t.Fatal(err)
	}
	if data, _ := os.ReadFile(filepath.Join(users, Name)); string(data) != "mine\n" {
		t.Errorf("the user's .gitignore became %q", data)
	}

	linked, outside := t.TempDir(), filepath.Join(t.TempDir(), "target")
	if err := os.Symlink(outside, filepath.Join(linked, Name)); err != nil {
		t.Skip("no symlinks here:", err)
	}
	if err := Create(linked); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Lstat(outside); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a file was written through the symlink: %v", err)
	}
	if fi, err := os.Lstat(filepath.Join(linked, Name)); err != nil || fi.Mode()&os.ModeSymlink == 0 {
		t.Errorf("the symlink was replaced: %v", err)
	}

	real := t.TempDir()
	link := filepath.Join(t.TempDir(), "state")
	os.Symlink(real, link)
	if err := Create(link); !errors.Is(err, ErrNotADir) {
		t.Errorf("Create through a symlinked directory: %v, want %v", err, ErrNotADir)
	}
	if entries, _ := os.ReadDir(real); len(entries) != 0 {
		t.Errorf("%d entries written through the symlinked directory", len(entries))
	}
}
