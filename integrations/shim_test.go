//go:build unix

package integrations

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// shimEnv is one isolated place to run a shim: a project dir and a bin dir at
// paths with spaces, a fake buildguard, and a PATH that holds only the fake
// tools plus mktemp for the fake buildguard (so the real gradle and mvn in
// /usr/bin are out of reach).
type shimEnv struct {
	dir  string // working directory (the "project")
	bin  string // on PATH: fake tools and utilities
	fake fakeBuildguard
}

func newShimEnv(t *testing.T) *shimEnv {
	t.Helper()
	base := realDir(t, t.TempDir())
	s := &shimEnv{dir: filepath.Join(base, "project dir"), bin: filepath.Join(base, "path bin")}
	for _, d := range []string{s.dir, s.bin, filepath.Join(base, "tools dir")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for _, util := range []string{"mktemp"} { // for the fake; the shims need no external command
		p, err := exec.LookPath(util)
		if err != nil {
			t.Fatalf("%s is required by the shims and the fake: %v", util, err)
		}
		if err := os.Symlink(p, filepath.Join(s.bin, util)); err != nil {
			t.Fatal(err)
		}
	}
	s.fake = newFakeBuildguard(t, filepath.Join(base, "tools dir"), "fake buildguard")
	return s
}

// tool writes a fake build tool that exits with code.
func (s *shimEnv) tool(t *testing.T, path string, code int) {
	t.Helper()
	writeScript(t, path, "exit "+strconv.Itoa(code)+"\n")
}

// env is the shim's environment: BUILDGUARD names the fake, PATH is the bin dir.
func (s *shimEnv) env(extra ...string) []string {
	return append(withPath(baseEnv("BUILDGUARD="+s.fake.exe), s.bin), extra...)
}

// shimPath is the absolute path of a shim in this repository.
func shimPath(t *testing.T, name string) string {
	t.Helper()
	p, err := filepath.Abs(filepath.Join("bin", name))
	if err != nil {
		t.Fatal(err)
	}
	return p
}

var shims = []struct {
	name, tool, wrapper string
}{
	{"buildguard-gradle", "gradle", "gradlew"},
	{"buildguard-mvn", "mvn", "mvnw"},
}

func TestShimHelp(t *testing.T) {
	t.Parallel()
	for _, sh := range shims {
		for _, flag := range []string{"--help", "-h"} {
			t.Run(sh.name+" "+flag, func(t *testing.T) {
				t.Parallel()
				s := newShimEnv(t)
				res := run(t, s.dir, s.env(), shimPath(t, sh.name), flag)
				if res.exit != 0 {
					t.Errorf("exit %d, want 0", res.exit)
				}
				if res.stdout != "" {
					t.Errorf("stdout %q, want nothing (usage goes to stderr)", res.stdout)
				}
				mustContain(t, "stderr", res.stderr, "usage: "+sh.name+" [OPTIONS] [--] ")
				mustContain(t, "stderr", res.stderr, "--port-file PATH")
				if calls := s.fake.calls(t); len(calls) != 0 {
					t.Errorf("buildguard ran: %+v", calls)
				}
			})
		}
	}
}

// TestShimRefusals: long-running builds, Maven's --continuous, nesting and
// usage errors exit 2 without starting buildguard.
func TestShimRefusals(t *testing.T) {
	t.Parallel()
	longRunning := "runs the application until it is stopped"
	nested := "refused: nested buildguard safe build (BUILDGUARD_SAFE_BUILD_ACTIVE is set)"
	cases := []struct {
		shim string
		env  []string
		args []string
		want string
	}{
		{"buildguard-gradle", nil, []string{"bootRun"}, "bootRun " + longRunning},
		{"buildguard-gradle", nil, []string{"--port", "4000", "classes", ":app:bootRun"}, ":app:bootRun " + longRunning},
		{"buildguard-mvn", nil, []string{"spring-boot:run"}, "spring-boot:run " + longRunning},
		{"buildguard-mvn", nil, []string{"-o", "org.springframework.boot:spring-boot-maven-plugin:2.7.18:run"}, "spring-boot-maven-plugin:2.7.18:run " + longRunning},
		{"buildguard-mvn", nil, []string{"compile", "jetty:run"}, "jetty:run " + longRunning},
		{"buildguard-mvn", nil, []string{"jetty:run-forked"}, "jetty:run-forked " + longRunning},
		{"buildguard-mvn", nil, []string{"--owner=o", "exec:java"}, "exec:java " + longRunning},
		{"buildguard-mvn", nil, []string{"org.codehaus.mojo:exec-maven-plugin:java"}, "exec-maven-plugin:java " + longRunning},
		{"buildguard-mvn", nil, []string{"--continuous", "compile"}, "Maven has no continuous mode (--continuous) that buildguard can guard cycle by cycle; run a finite build such as 'buildguard-mvn -- compile' after each change"},
		{"buildguard-mvn", nil, []string{"-o", "--continuous"}, "or, for a Gradle build, 'buildguard-gradle --continuous classes'"},
		{"buildguard-gradle", []string{activeEnv + "=1"}, []string{"classes"}, nested},
		{"buildguard-gradle", []string{activeEnv + "="}, []string{"classes"}, nested},
		{"buildguard-mvn", []string{activeEnv + "=1"}, []string{"compile"}, nested},
		{"buildguard-gradle", nil, nil, "name the Gradle tasks to run"},
		{"buildguard-gradle", nil, []string{"--owner", "o", "--"}, "name the Gradle tasks to run"},
		{"buildguard-mvn", nil, []string{"--port"}, "option --port needs a value"},
		{"buildguard-mvn", nil, []string{"--timeout-ms", "9"}, "name the Maven goals or phases to run"},
	}
	for _, tc := range cases {
		t.Run(tc.shim+" "+strings.Join(tc.args, " ")+" "+strings.Join(tc.env, " "), func(t *testing.T) {
			t.Parallel()
			s := newShimEnv(t)
			s.tool(t, filepath.Join(s.bin, "gradle"), 0)
			s.tool(t, filepath.Join(s.bin, "mvn"), 0)
			res := run(t, s.dir, s.env(tc.env...), append([]string{shimPath(t, tc.shim)}, tc.args...)...)
			if res.exit != 2 {
				t.Errorf("exit %d, want 2\nstderr:\n%s", res.exit, res.stderr)
			}
			mustContain(t, "stderr", res.stderr, tc.shim+": ")
			mustContain(t, "stderr", res.stderr, tc.want)
			if calls := s.fake.calls(t); len(calls) != 0 {
				t.Errorf("buildguard ran, want never: %+v", calls)
			}
		})
	}
}

// TestShimToolDiscovery: ./gradlew and ./mvnw win over the tool on PATH, the
// tool on PATH is used by its full path, and a missing or unusable tool is
// exit 127 before buildguard starts.
func TestShimToolDiscovery(t *testing.T) {
	t.Parallel()
	for _, sh := range shims {
		t.Run(sh.name+" prefers ./"+sh.wrapper, func(t *testing.T) {
			t.Parallel()
			s := newShimEnv(t)
			s.tool(t, filepath.Join(s.bin, sh.tool), 0)
			s.tool(t, filepath.Join(s.dir, sh.wrapper), 7)
			res := run(t, s.dir, s.env(), shimPath(t, sh.name), "x")
			if res.exit != 7 {
				t.Errorf("exit %d, want ./%s's exit code 7\nstderr:\n%s", res.exit, sh.wrapper, res.stderr)
			}
			got := s.fake.onlyCall(t).args
			if diff := cmp.Diff([]string{"--", "./" + sh.wrapper, "x"}, got); diff != "" {
				t.Errorf("buildguard argv (-want +got):\n%s", diff)
			}
		})
		t.Run(sh.name+" falls back to "+sh.tool+" on PATH", func(t *testing.T) {
			t.Parallel()
			s := newShimEnv(t)
			s.tool(t, filepath.Join(s.bin, sh.tool), 5)
			res := run(t, s.dir, s.env(), shimPath(t, sh.name), "x")
			if res.exit != 5 {
				t.Errorf("exit %d, want %s's exit code 5\nstderr:\n%s", res.exit, sh.tool, res.stderr)
			}
			got := s.fake.onlyCall(t).args
			if diff := cmp.Diff([]string{"--", filepath.Join(s.bin, sh.tool), "x"}, got); diff != "" {
				t.Errorf("buildguard argv (-want +got):\n%s", diff)
			}
		})
		t.Run(sh.name+" refuses a non-executable ./"+sh.wrapper, func(t *testing.T) {
			t.Parallel()
			s := newShimEnv(t)
			s.tool(t, filepath.Join(s.bin, sh.tool), 0)
			if err := os.WriteFile(filepath.Join(s.dir, sh.wrapper), []byte("#!/bin/sh\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			res := run(t, s.dir, s.env(), shimPath(t, sh.name), "x")
			if res.exit != 127 {
				t.Errorf("exit %d, want 127", res.exit)
			}
			mustContain(t, "stderr", res.stderr, "./"+sh.wrapper+" is not executable; run: chmod +x "+sh.wrapper)
			if calls := s.fake.calls(t); len(calls) != 0 {
				t.Errorf("buildguard ran, want never: %+v", calls)
			}
		})
		t.Run(sh.name+" without any "+sh.tool, func(t *testing.T) {
			t.Parallel()
			s := newShimEnv(t)
			res := run(t, s.dir, s.env(), shimPath(t, sh.name), "x")
			if res.exit != 127 {
				t.Errorf("exit %d, want 127", res.exit)
			}
			mustContain(t, "stderr", res.stderr, "no ./"+sh.wrapper+" in "+s.dir+" and no "+sh.tool+" on PATH")
			if calls := s.fake.calls(t); len(calls) != 0 {
				t.Errorf("buildguard ran, want never: %+v", calls)
			}
		})
	}
}

// TestShimPassthrough: options before the tool arguments go to buildguard,
// everything else to the tool, each argument byte for byte.
func TestShimPassthrough(t *testing.T) {
	t.Parallel()
	awkward := []string{"-Dmsg=a ; $(x)", "a b", "", "line\nbreak", "*", "'q'", `"dq" \ back`, "--help", "bootRunner"}
	cases := []struct {
		name string
		shim string
		args []string
		want func(tool string) []string
	}{
		{"every option, then --", "buildguard-gradle",
			append([]string{"--port", "4000", "--port-file", "p f/agent.port", "--owner=o-1", "--timeout-ms", "9",
				"--grace", "3s", "--transcript", "t f.log", "--", "--port", "5"}, awkward...),
			func(tool string) []string {
				return append([]string{"--port", "4000", "--port-file", "p f/agent.port", "--owner=o-1", "--timeout-ms", "9",
					"--grace", "3s", "--transcript", "t f.log", "--", tool, "--port", "5"}, awkward...)
			}},
		{"options end at the first tool argument", "buildguard-gradle",
			[]string{"--owner", "bootRun", "--port-file=x", "classes", "--owner", "o2", "-t-not"},
			func(tool string) []string {
				return []string{"--owner", "bootRun", "--port-file=x", "--", tool, "classes", "--owner", "o2", "-t-not"}
			}},
		{"no options", "buildguard-mvn",
			append([]string{"-t", "toolchains.xml", "-q"}, awkward...),
			func(tool string) []string {
				return append([]string{"--", tool, "-t", "toolchains.xml", "-q"}, awkward...)
			}},
		{"a second -- belongs to the tool", "buildguard-mvn",
			[]string{"--", "--", "compile"},
			func(tool string) []string { return []string{"--", tool, "--", "compile"} }},
		// A continuous Gradle build is guarded cycle by cycle (docs/decisions.md#D20).
		{"--continuous runs buildguard --continuous", "buildguard-gradle",
			[]string{"--continuous", "classes"},
			func(tool string) []string { return []string{"--continuous", "--", tool, "--continuous", "classes"} }},
		{"-qt runs buildguard --continuous", "buildguard-gradle",
			[]string{"-qt", "classes"},
			func(tool string) []string { return []string{"--continuous", "--", tool, "-qt", "classes"} }},
		{"-tq and -continuous run buildguard --continuous", "buildguard-gradle",
			[]string{"classes", "-tq", "-continuous"},
			func(tool string) []string {
				return []string{"--continuous", "--", tool, "classes", "-tq", "-continuous"}
			}},
		{"values, long names and task arguments are not -t", "buildguard-gradle",
			[]string{"-xtest", "-Dt=1", "-stacktrace", "-status", "--tests", "-t=x", "classes", "--", "-t"},
			func(tool string) []string {
				return []string{"--", tool, "-xtest", "-Dt=1", "-stacktrace", "-status", "--tests", "-t=x", "classes", "--", "-t"}
			}},
		{"-t after options runs buildguard --continuous", "buildguard-gradle",
			[]string{"--owner", "o", "--", "classes", "-t", "--offline"},
			func(tool string) []string {
				return []string{"--continuous", "--owner", "o", "--", tool, "classes", "-t", "--offline"}
			}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			s := newShimEnv(t)
			tool := filepath.Join(s.bin, strings.TrimPrefix(tc.shim, "buildguard-"))
			s.tool(t, tool, 0)
			res := run(t, s.dir, s.env(), append([]string{shimPath(t, tc.shim)}, tc.args...)...)
			if res.exit != 0 {
				t.Fatalf("exit %d, want 0\nstderr:\n%s", res.exit, res.stderr)
			}
			call := s.fake.onlyCall(t)
			if diff := cmp.Diff(tc.want(tool), call.args); diff != "" {
				t.Errorf("buildguard argv (-want +got):\n%s", diff)
			}
			if call.cwd != s.dir {
				t.Errorf("buildguard cwd %q, want %q", call.cwd, s.dir)
			}
			if call.active != "1" {
				t.Errorf("%s = %q for buildguard, want 1", activeEnv, call.active)
			}
		})
	}
}

// TestShimFindsBuildguard: $BUILDGUARD, else buildguard next to the shim, else
// buildguard on PATH; none of them is exit 127.
func TestShimFindsBuildguard(t *testing.T) {
	t.Parallel()
	// copyShim puts a copy of the gradle shim into a dir with a space.
	copyShim := func(t *testing.T, dir string) string {
		t.Helper()
		b, err := os.ReadFile(shimPath(t, "buildguard-gradle"))
		if err != nil {
			t.Fatal(err)
		}
		p := filepath.Join(dir, "shim dir", "buildguard-gradle")
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		writeExecutable(t, p, b)
		return p
	}
	t.Run("next to the shim", func(t *testing.T) {
		t.Parallel()
		s := newShimEnv(t)
		s.tool(t, filepath.Join(s.bin, "gradle"), 0)
		shim := copyShim(t, t.TempDir())
		next := newFakeBuildguard(t, filepath.Dir(shim), "buildguard")
		onPath := newFakeBuildguard(t, s.bin, "buildguard")
		res := run(t, s.dir, withPath(baseEnv(), s.bin), shim, "classes")
		if res.exit != 0 {
			t.Fatalf("exit %d\nstderr:\n%s", res.exit, res.stderr)
		}
		next.onlyCall(t)
		if calls := onPath.calls(t); len(calls) != 0 {
			t.Errorf("buildguard on PATH ran, want the one next to the shim")
		}
	})
	t.Run("on PATH", func(t *testing.T) {
		t.Parallel()
		s := newShimEnv(t)
		s.tool(t, filepath.Join(s.bin, "gradle"), 0)
		shim := copyShim(t, t.TempDir())
		onPath := newFakeBuildguard(t, s.bin, "buildguard")
		res := run(t, s.dir, withPath(baseEnv(), s.bin), shim, "classes")
		if res.exit != 0 {
			t.Fatalf("exit %d\nstderr:\n%s", res.exit, res.stderr)
		}
		onPath.onlyCall(t)
	})
	t.Run("BUILDGUARD wins", func(t *testing.T) {
		t.Parallel()
		s := newShimEnv(t)
		s.tool(t, filepath.Join(s.bin, "gradle"), 0)
		shim := copyShim(t, t.TempDir())
		next := newFakeBuildguard(t, filepath.Dir(shim), "buildguard")
		res := run(t, s.dir, s.env(), shim, "classes")
		if res.exit != 0 {
			t.Fatalf("exit %d\nstderr:\n%s", res.exit, res.stderr)
		}
		s.fake.onlyCall(t)
		if calls := next.calls(t); len(calls) != 0 {
			t.Errorf("buildguard next to the shim ran, want $BUILDGUARD")
		}
	})
	t.Run("nowhere", func(t *testing.T) {
		t.Parallel()
		s := newShimEnv(t)
		s.tool(t, filepath.Join(s.bin, "gradle"), 0)
		shim := copyShim(t, t.TempDir())
		res := run(t, s.dir, withPath(baseEnv(), s.bin), shim, "classes")
		if res.exit != 127 {
			t.Errorf("exit %d, want 127", res.exit)
		}
		mustContain(t, "stderr", res.stderr, "buildguard not found next to this script or on PATH; install it or set BUILDGUARD=/path/to/buildguard")
	})
}
