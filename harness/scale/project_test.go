package scale

import (
	"bytes"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// tree is every file under dir, by path relative to it, with its bytes.
func tree(t *testing.T, dir string) map[string][]byte {
	t.Helper()
	out := map[string][]byte{}
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(dir, path)
		data, err := os.ReadFile(path)
		out[rel] = data
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// The same project gives the same paths and bytes wherever it is written;
// every class file lies where its binary name says, in its package.
func TestGenerateIsDeterministic(t *testing.T) {
	t.Parallel()
	a := Project{Dir: t.TempDir(), Classes: 250, Packages: 7}
	b := a
	b.Dir = t.TempDir()
	for _, p := range []Project{a, b} {
		if err := p.Generate(); err != nil {
			t.Fatal(err)
		}
	}
	ta, tb := tree(t, a.Dir), tree(t, b.Dir)
	if len(ta) != a.Classes {
		t.Fatalf("%d files written, want %d", len(ta), a.Classes)
	}
	packages := map[string]bool{}
	for rel, data := range ta {
		if !bytes.Equal(data, tb[rel]) {
			t.Fatalf("%s differs between two generations", rel)
		}
		if len(data) != classSize {
			t.Fatalf("%s has %d bytes, want %d", rel, len(data), classSize)
		}
		packages[filepath.Dir(rel)] = true
	}
	if len(packages) != a.Packages {
		t.Fatalf("classes in %d packages, want %d", len(packages), a.Packages)
	}
	for i := range a.Classes {
		rel, _ := filepath.Rel(a.Dir, a.Path(i))
		if !bytes.Equal(ta[rel], ClassBytes(a.ClassName(i), 0)) {
			t.Fatalf("class %d: %s does not hold the bytes of %s", i, rel, a.ClassName(i))
		}
	}
}

// A change of k rewrites exactly k class files (all of them at most), the
// same ones for the same k, with bytes that depend on the run only.
func TestRewriteChangesExactlyK(t *testing.T) {
	t.Parallel()
	for _, k := range []int{1, 3, 64, 250, 1000} {
		p := Project{Dir: t.TempDir(), Classes: 250, Packages: 7}
		if err := p.Generate(); err != nil {
			t.Fatal(err)
		}
		before := tree(t, p.Dir)
		n, err := p.Rewrite(k, 1)
		if err != nil {
			t.Fatal(err)
		}
		first := tree(t, p.Dir)
		want := min(k, p.Classes)
		if n != want || len(p.Changed(k)) != want {
			t.Fatalf("k=%d: wrote %d, Changed has %d, want %d", k, n, len(p.Changed(k)), want)
		}
		if got := differing(before, first); got != want {
			t.Fatalf("k=%d: run 1 changed %d files, want %d", k, got, want)
		}
		// The same run again writes the same bytes: nothing differs.
		if _, err := p.Rewrite(k, 1); err != nil {
			t.Fatal(err)
		}
		if got := differing(first, tree(t, p.Dir)); got != 0 {
			t.Fatalf("k=%d: run 1 twice changed %d files, want none", k, got)
		}
		// Another run rewrites the same k files with other bytes.
		if _, err := p.Rewrite(k, 2); err != nil {
			t.Fatal(err)
		}
		second := tree(t, p.Dir)
		if got := differing(first, second); got != want {
			t.Fatalf("k=%d: run 2 changed %d files of run 1, want %d", k, got, want)
		}
		if got := differing(before, second); got != want {
			t.Fatalf("k=%d: run 2 differs from the generated project in %d files, want %d", k, got, want)
		}
	}
}

func differing(a, b map[string][]byte) int {
	n := 0
	for rel, data := range a {
		if !bytes.Equal(data, b[rel]) {
			n++
		}
	}
	return n + max(len(b)-len(a), 0)
}

// The class files are valid: javap reads them as the classes they name.
func TestClassBytesAreAClassFile(t *testing.T) {
	t.Parallel()
	javap, err := exec.LookPath("javap")
	if err != nil {
		t.Skip("javap is not installed")
	}
	p := Project{Dir: t.TempDir(), Classes: 3, Packages: 2}
	if err := p.Generate(); err != nil {
		t.Fatal(err)
	}
	if _, err := p.Rewrite(1, 12345); err != nil {
		t.Fatal(err)
	}
	for i := range p.Classes {
		out, err := exec.Command(javap, "-v", p.Path(i)).CombinedOutput()
		if err != nil {
			t.Fatalf("javap %s: %v\n%s", p.Path(i), err, out)
		}
		for _, want := range []string{"public class " + p.ClassName(i), "major version: 61", `SourceFile: "` + strings.TrimSuffix(filepath.Base(p.Path(i)), ".class") + `.java"`} {
			if !bytes.Contains(out, []byte(want)) {
				t.Fatalf("javap %s says no %q:\n%s", p.Path(i), want, out)
			}
		}
	}
}

// A project that cannot be is refused before anything is written.
func TestProjectRefusesWhatCannotBe(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	for _, p := range []Project{{Dir: "", Classes: 1, Packages: 1}, {Dir: dir, Classes: 0, Packages: 1}, {Dir: dir, Classes: 3, Packages: 4}, {Dir: dir, Classes: 3, Packages: 0}} {
		if err := p.Generate(); err == nil {
			t.Errorf("Generate(%+v) = nil, want an error", p)
		}
		if _, err := p.Rewrite(1, 1); err == nil {
			t.Errorf("Rewrite(%+v) = nil, want an error", p)
		}
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 0 {
		t.Fatalf("a refused project wrote %d entries", len(entries))
	}
}
