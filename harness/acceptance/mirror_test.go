package acceptance

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"testing"
)

func TestMirrorRepositoryLinksFilesNeverDirectories(t *testing.T) {
	t.Parallel()
	base := t.TempDir()
	src := filepath.Join(base, "src")
	for _, f := range []string{"org/x/p/1.0/p-1.0.jar", "org/x/p/1.0/p-1.0.pom", "top.txt"} {
		if err := writeFile(filepath.Join(src, f), "content of "+f); err != nil {
			t.Fatal(err)
		}
	}
	// A directory reached through a symlink, as Debian's repo has file links.
	if err := writeFile(filepath.Join(base, "elsewhere", "q-2.0.jar"), "q"); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(base, "elsewhere"), filepath.Join(src, "org", "x", "q")); err != nil {
		t.Fatal(err)
	}
	// A cycle must not run forever.
	if err := os.Symlink(src, filepath.Join(src, "org", "loop")); err != nil {
		t.Fatal(err)
	}
	dst := filepath.Join(base, "dst")
	n, err := mirrorRepository(src, dst)
	if err != nil {
		t.Fatal(err)
	}
	var links, dirs int
	err = filepath.WalkDir(dst, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		info, err := os.Lstat(path)
		if err != nil {
			return err
		}
		switch {
		case info.IsDir():
			dirs++
		case info.Mode()&fs.ModeSymlink != 0:
			links++
			target, err := os.Stat(path)
			if err != nil {
				return err
			}
			if target.IsDir() {
				t.Errorf("%s is a directory symlink", path)
			}
		default:
			t.Errorf("%s is a copied file, want a symlink", path)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if n != links {
		t.Errorf("mirrorRepository reported %d files, walked %d links", n, links)
	}
	if got := readFile(t, filepath.Join(dst, "org", "x", "q", "q-2.0.jar")); got != "q" {
		t.Errorf("file behind a directory symlink = %q", got)
	}
	if got := readFile(t, filepath.Join(dst, "org", "x", "p", "1.0", "p-1.0.pom")); got != "content of org/x/p/1.0/p-1.0.pom" {
		t.Errorf("mirrored pom = %q", got)
	}
	if err := checkMirror(dst); err != nil {
		t.Errorf("checkMirror: %v", err)
	}
	// Writing a new file into the mirror never lands in the source.
	if err := os.WriteFile(filepath.Join(dst, "org", "x", "p", "1.0", "_remote.repositories"), []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(src, "org", "x", "p", "1.0", "_remote.repositories")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a file written into the mirror appeared in the source (err %v)", err)
	}
}

func TestMirrorRepositoryRefusesExistingDestination(t *testing.T) {
	t.Parallel()
	src, dst := t.TempDir(), t.TempDir()
	if _, err := mirrorRepository(src, dst); err == nil {
		t.Fatal("mirroring into an existing dir succeeded")
	}
}

func TestMirrorRepositoryMissingSource(t *testing.T) {
	t.Parallel()
	_, err := mirrorRepository(filepath.Join(t.TempDir(), "none"), filepath.Join(t.TempDir(), "dst"))
	if !errors.Is(err, ErrPrerequisite) {
		t.Fatalf("err = %v, want ErrPrerequisite", err)
	}
}

func TestCheckMirrorFindsDirectoryLink(t *testing.T) {
	t.Parallel()
	dst := t.TempDir()
	if err := os.Symlink(t.TempDir(), filepath.Join(dst, "dirlink")); err != nil {
		t.Fatal(err)
	}
	if err := checkMirror(dst); err == nil {
		t.Fatal("checkMirror accepted a directory symlink")
	}
}
