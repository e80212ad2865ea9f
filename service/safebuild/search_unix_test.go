//go:build unix

package safebuild

import (
	"context"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// A scan reads a tree's directories on several goroutines, and its
// snapshot and problems are those of one walk by name, every time: each
// regular class file once with its binary name, the entries named like a
// class file that are not regular files said in the walk's order (a/b
// before a.c, which a sort of the paths would swap), links never followed.
func TestScanIsAWalkByName(t *testing.T) {
	t.Parallel()
	root, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	write := func(rel string) { writeFile(t, filepath.Join(root, rel), "class") }
	for _, rel := range []string{"a/X.class", "a/module-info.class", "a/notes.txt", "a/b/Y.class", "a.c/Z.class", "d05/e/f/G.class"} {
		write(rel)
	}
	for i := range 3 * scanWorkers {
		for j := range 3 {
			write(filepath.Join("d"+string(rune('a'+i)), "p", "C"+string(rune('0'+j))+".class"))
		}
	}
	for _, rel := range []string{"a/b/Q.class", "a.c/R.class"} {
		if err := syscall.Mkfifo(filepath.Join(root, rel), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink(filepath.Join(root, "a", "X.class"), filepath.Join(root, "L.class")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(root, "a"), filepath.Join(root, "link")); err != nil {
		t.Fatal(err)
	}
	want := map[string]string{}
	if err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if class, ok := className(root, path); err == nil && d.Type().IsRegular() && strings.HasSuffix(path, ".class") && ok {
			want[path] = class
		}
		return err
	}); err != nil {
		t.Fatal(err)
	}
	wantProblems := []string{
		filepath.Join(root, "L.class") + " is not a regular file (L---------), so its class cannot be read",
		filepath.Join(root, "a", "b", "Q.class") + " is not a regular file (p---------), so its class cannot be read",
		filepath.Join(root, "a.c", "R.class") + " is not a regular file (p---------), so its class cannot be read",
	}
	for range 20 {
		snap := scan(context.Background(), []watchedDir{{named: root, root: root}}, false)
		got := map[string]string{}
		for path, f := range snap.files {
			got[path] = f.class
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Fatalf("files (-walk +scan):\n%s", diff)
		}
		if diff := cmp.Diff(wantProblems, snap.problems); diff != "" {
			t.Fatalf("problems (-want +got):\n%s", diff)
		}
	}
}

// A directory whose read hangs (a stuck network file system) holds the
// scan up only until its context ends: the snapshot says it ran out of
// time, and the read is left behind.
func TestScanLeavesAHungReadBehind(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	for _, rel := range []string{"a/A.class", "stuck/B.class"} {
		writeFile(t, filepath.Join(root, rel), "class")
	}
	release, entered := make(chan struct{}), make(chan struct{})
	t.Cleanup(func() { close(release) })
	open := func(top *os.File, rel, path string) (*os.File, error) {
		if rel == "stuck" {
			close(entered)
			<-release
		}
		return openScanDir(top, rel, path)
	}
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		select {
		case <-entered:
			cancel()
		case <-time.After(10 * time.Second):
		}
	}()
	done := make(chan snapshot, 1)
	go func() {
		done <- scanWith(ctx, []watchedDir{{named: "build/classes", root: root}}, false, scanFaults{open: open})
	}()
	select {
	case snap := <-done:
		if want := []string{"the search ran out of time while reading build/classes"}; !cmp.Equal(snap.problems, want) || len(snap.files) != 0 {
			t.Errorf("problems %q, %d files; want %q and none", snap.problems, len(snap.files), want)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("the scan waited for a directory whose read hangs")
	}
}

// A directory of the tree swapped for a symlink to a directory outside it
// between its listing and its read is not followed: the class files
// outside are not in the snapshot, and it says the directory could not be
// read.
func TestScanNeverFollowsADirectorySwappedForALink(t *testing.T) {
	t.Parallel()
	base, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	root, outside := filepath.Join(base, "classes"), filepath.Join(base, "outside")
	writeFile(t, filepath.Join(root, "a", "b", "A.class"), "class")
	writeFile(t, filepath.Join(outside, "b", "X.class"), "class")
	for _, rel := range []string{"a", filepath.Join("a", "b")} {
		t.Run(rel, func(t *testing.T) {
			dir := filepath.Join(root, rel)
			swapped := false
			open := func(top *os.File, r, path string) (*os.File, error) {
				if r == rel && !swapped { // listed already: swap it now
					swapped = true
					if err := os.Rename(dir, dir+".away"); err != nil {
						t.Fatal(err)
					}
					if err := os.Symlink(filepath.Join(outside, strings.TrimPrefix(rel, "a")), dir); err != nil {
						t.Fatal(err)
					}
					t.Cleanup(func() {
						_ = os.Remove(dir)
						_ = os.Rename(dir+".away", dir)
					})
				}
				return openScanDir(top, r, path)
			}
			snap := scanWith(context.Background(), []watchedDir{{named: root, root: root}}, false, scanFaults{open: open})
			if !swapped {
				t.Fatalf("the scan never opened %s", rel)
			}
			if len(snap.files) != 0 {
				t.Errorf("the scan read %d class files through the link: %v", len(snap.files), snap.files)
			}
			if len(snap.problems) != 1 || !strings.HasPrefix(snap.problems[0], dir+" could not be read") {
				t.Errorf("problems %q, want %s could not be read", snap.problems, dir)
			}
		})
	}
}
