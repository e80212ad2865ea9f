package buildqueue

import (
	"context"
	"os"
	"path/filepath"
	"testing"
)

// layout writes the files (or, with a trailing slash, directories) under
// dir.
func layout(t *testing.T, dir string, paths ...string) {
	t.Helper()
	for _, p := range paths {
		full := filepath.Join(dir, filepath.FromSlash(p))
		if p[len(p)-1] == '/' {
			if err := os.MkdirAll(full, 0o755); err != nil {
				t.Fatal(err)
			}
			continue
		}
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// TestRoot: each front's directory of a project names one root
// (docs/safe-build.md#4): .buildguard.json nearest, else the highest Gradle
// settings, else the top of the pom.xml chain, else the directory; never
// past .git, the home directory or the file-system root.
func TestRoot(t *testing.T) {
	for _, c := range []struct {
		name  string
		files []string
		from  string // directory the build starts in
		want  string // its root
	}{
		{"gradle module", []string{"p/settings.gradle", "p/build.gradle", "p/b/build.gradle"}, "p/b", "p"},
		{"gradle kts, module two levels down without a build file between", []string{"p/settings.gradle.kts", "p/libs/b/build.gradle.kts"}, "p/libs/b", "p"},
		{"gradle root itself", []string{"p/settings.gradle"}, "p", "p"},
		{"gradle included build: the including build's root", []string{"p/settings.gradle", "p/inc/settings.gradle", "p/inc/m/build.gradle"}, "p/inc/m", "p"},
		{"maven module", []string{"p/pom.xml", "p/b/pom.xml"}, "p/b", "p"},
		{"maven nested aggregators", []string{"p/pom.xml", "p/a/pom.xml", "p/a/b/pom.xml"}, "p/a/b", "p"},
		{"maven chain broken by a directory without pom.xml", []string{"p/pom.xml", "p/libs/b/pom.xml"}, "p/libs/b", "p/libs/b"},
		{"maven: a pom.xml above a directory without one is not its root", []string{"p/pom.xml", "p/docs/"}, "p/docs", "p/docs"},
		{".buildguard.json wins, nearest", []string{"p/settings.gradle", "p/sub/.buildguard.json", "p/sub/m/build.gradle"}, "p/sub/m", "p/sub"},
		{".buildguard.json in the root of a maven chain", []string{"p/.buildguard.json", "p/pom.xml", "p/libs/b/pom.xml"}, "p/libs/b", "p"},
		{"stops at the repository's top", []string{"p/settings.gradle", "p/repo/.git/", "p/repo/b/build.gradle"}, "p/repo/b", "p/repo/b"},
		{"the repository's top is looked at", []string{"p/repo/.git", "p/repo/settings.gradle", "p/repo/b/build.gradle"}, "p/repo/b", "p/repo"},
		{"not a build at all", []string{"p/x/"}, "p/x", "p/x"},
		{"a directory named settings.gradle is no settings", []string{"p/settings.gradle/", "p/b/"}, "p/b", "p/b"},
	} {
		t.Run(c.name, func(t *testing.T) {
			base := project(t)
			layout(t, base, c.files...)
			got := Root(filepath.Join(base, filepath.FromSlash(c.from)))
			if want := filepath.Join(base, filepath.FromSlash(c.want)); got != want {
				t.Errorf("Root(%s) = %s, want %s", c.from, got, want)
			}
		})
	}
}

// TestRootStopsBelowHome: a stray settings.gradle in the home directory (or
// above it) does not make every project below one project.
func TestRootStopsBelowHome(t *testing.T) {
	base := project(t)
	layout(t, base, "settings.gradle", "home/settings.gradle", "home/src/p/b/build.gradle", "home/src/p/pom.xml")
	t.Setenv("HOME", filepath.Join(base, "home"))
	if got, want := Root(filepath.Join(base, "home/src/p/b")), filepath.Join(base, "home/src/p/b"); got != want {
		t.Errorf("Root = %s, want %s (nothing at or above the home directory)", got, want)
	}
	if got, want := Root(filepath.Join(base, "home")), filepath.Join(base, "home"); got != want {
		t.Errorf("Root of the home directory itself = %s, want %s", got, want)
	}
}

// TestRootThroughSymlink: a symlinked spelling of a module has the root of
// its real directory.
func TestRootThroughSymlink(t *testing.T) {
	base := project(t)
	layout(t, base, "p/settings.gradle", "p/b/build.gradle")
	if err := os.Symlink(filepath.Join(base, "p/b"), filepath.Join(base, "link")); err != nil {
		t.Fatal(err)
	}
	if got, want := Root(filepath.Join(base, "link")), filepath.Join(base, "p"); got != want {
		t.Errorf("Root(link) = %s, want %s", got, want)
	}
}

// TestModuleQueuesBehindRoot: a build started in a module's directory waits
// behind a build of the project's root, in the root's queue.
func TestModuleQueuesBehindRoot(t *testing.T) {
	base := project(t)
	layout(t, base, "settings.gradle", "b/build.gradle")
	q := newQueue()
	first, err := q.Wait(context.Background(), Request{Project: base, Name: "root"})
	if err != nil {
		t.Fatal(err)
	}
	seen := make(chan Status, 16)
	mod := queued(t, q, Request{Project: filepath.Join(base, "b"), Name: "module", Report: func(s Status) { seen <- s }})
	st := <-seen
	if st.Place != 2 || len(st.Ahead) != 1 || st.Ahead[0].Name != "root" {
		t.Fatalf("the module's build stands %+v, want place 2 behind root", st)
	}
	if _, err := os.Lstat(filepath.Join(base, "b", StateDir)); !os.IsNotExist(err) {
		t.Errorf("the module's directory got a state directory of its own (%v)", err)
	}
	first.Release(nil)
	o := await(t, mod)
	if o.err != nil {
		t.Fatal(o.err)
	}
	o.turn.Release(nil)
}
