package safebuild

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// Without the kernel's report, a class file new beneath a directory the
// scan before the build searched is a changed class whatever its times, as
// when a directory of older class files is moved in (a rename changes no
// file's times), or moved into place as a watched directory that did not
// exist before the build.
func TestScanCountsTheClassesOfADirectoryMovedIn(t *testing.T) {
	t.Parallel()
	base, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	root, absent := filepath.Join(base, "classes"), filepath.Join(base, "absent")
	for _, path := range []string{
		filepath.Join(root, "app", "A.class"),
		filepath.Join(base, "outside", "pkg", "C.class"),
		filepath.Join(base, "prebuilt", "app", "P.class"),
	} {
		writeFile(t, path, "class")
	}
	// Files older than the build: no file's change time can be set back.
	time.Sleep(recentWindow + 100*time.Millisecond)
	dirs := []watchedDir{{named: root, root: root}, {named: absent, root: absent}}
	before := scan(context.Background(), dirs, true)
	if err := os.Rename(filepath.Join(base, "outside", "pkg"), filepath.Join(root, "pkg")); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(filepath.Join(base, "prebuilt"), absent); err != nil {
		t.Fatal(err)
	}
	changed, problems, lost := changedSince(context.Background(), before, dirs)
	if got, want := classNames(changed), "app.P pkg.C"; got != want || len(problems) > 0 || lost != "" {
		t.Errorf("changed %q (problems %q, lost %q), want %q", got, problems, lost, want)
	}
}

// classNames is the binary names of changed, in their order.
func classNames(changed []changedFile) string {
	var names []string
	for _, c := range changed {
		names = append(names, c.class)
	}
	return strings.Join(names, " ")
}

// writeFile writes text to path, making its directories.
func writeFile(t *testing.T, path, text string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
}
