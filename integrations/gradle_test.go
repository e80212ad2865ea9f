//go:build unix

package integrations

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/buildguard/buildguard/internal/testsupport/wait"
)

// The fixture's build script. Besides a Java source for the child build to
// compile, it has a task `other` that leaves a marker file when it runs, ways to
// wire `other` to reclazzSafeBuild through dependsOn or finalizedBy, and a
// configuration-time report of where the init script put its task.
const fixtureBuildGradle = `allprojects { apply plugin: 'java' }
task other { doLast { new File(rootDir, 'other-ran').text = 'ran' } }
if (findProperty('test.dependsOn')) { reclazzSafeBuild.dependsOn other }
if (findProperty('test.finalizedBy')) { reclazzSafeBuild.finalizedBy other }
gradle.projectsEvaluated {
    def safe = allprojects.findAll { it.tasks.findByName('reclazzSafeBuild') != null }.collect { it.path }
    println "fixture: safe-task-projects=${safe}"
    println "fixture: gradle-home=${gradle.gradleHomeDir}"
    println "fixture: group=${tasks.findByName('reclazzSafeBuild')?.group}"
}
`

// gradleFixture is a generated two-project Gradle build at a path with spaces,
// with its own Gradle user home and a fake buildguard.
type gradleFixture struct {
	root       string // the root project dir, symlinks resolved
	initScript string // absolute path of buildguard.init.gradle
	fake       fakeBuildguard
	env        []string // environment for gradle, complete
	tmp        string   // java.io.tmpdir of the JVM that runs the outer build
	daemon     bool     // run the outer build in a Gradle daemon
	home       string   // GRADLE_USER_HOME, private to the fixture
}

// newGradleFixture generates the fixture. With daemon set, every outer build
// runs in one Gradle daemon private to the fixture (started by the first build,
// stopped at cleanup, idle timeout 2 minutes in case cleanup never runs);
// otherwise each build runs in the client JVM (--no-daemon).
func newGradleFixture(t *testing.T, daemon bool) *gradleFixture {
	t.Helper()
	requireTool(t, "gradle", "java")
	base := realDir(t, t.TempDir())
	root := filepath.Join(base, "gradle project")
	files := map[string]string{
		"settings.gradle":            "rootProject.name = 'demo'\ninclude 'sub'\n",
		"build.gradle":               fixtureBuildGradle,
		"src/main/java/p/A.java":     "package p;\npublic class A {}\n",
		"sub/build.gradle":           "",
		"sub/src/main/java/q/B.java": "package q;\npublic class B {}\n",
	}
	writeFiles(t, root, files)
	// No spaces here: the gradle start script splits GRADLE_OPTS on whitespace,
	// and org.gradle.jvmargs is split the same way.
	tmp := filepath.Join(base, "gradle-jvm-tmp")
	home := filepath.Join(base, "gradle user home")
	for _, d := range []string{tmp, home, filepath.Join(base, "tools dir")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	initScript, err := filepath.Abs(filepath.Join("gradle", "buildguard.init.gradle"))
	if err != nil {
		t.Fatal(err)
	}
	f := &gradleFixture{
		root:       root,
		initScript: initScript,
		fake:       newFakeBuildguard(t, filepath.Join(base, "tools dir"), "fake buildguard"),
		tmp:        tmp,
		daemon:     daemon,
		home:       home,
	}
	if daemon {
		props := "org.gradle.jvmargs=-Xmx512m -Djava.io.tmpdir=" + tmp + "\norg.gradle.daemon.idletimeout=120000\n"
		if err := os.WriteFile(filepath.Join(home, "gradle.properties"), []byte(props), 0o644); err != nil {
			t.Fatal(err)
		}
		f.env = baseEnv("GRADLE_USER_HOME=" + home)
		t.Cleanup(func() {
			f.stopDaemons(t)
		})
	} else {
		// The outer build runs in the client JVM (--no-daemon with default JVM
		// arguments), so GRADLE_OPTS sets its temp dir.
		f.env = baseEnv("GRADLE_USER_HOME="+home, "GRADLE_OPTS=-Djava.io.tmpdir="+tmp)
	}
	return f
}

// gradle runs the real Gradle on the fixture with the init script.
func (f *gradleFixture) gradle(t *testing.T, env []string, args ...string) result {
	t.Helper()
	mode := "--no-daemon"
	if f.daemon {
		mode = "--daemon"
	}
	argv := append([]string{"gradle", "--offline", mode, "--console=plain", "--init-script", f.initScript}, args...)
	return run(t, f.root, env, argv...)
}

// leftoverCaches lists the temporary project cache dirs still present.
func (f *gradleFixture) leftoverCaches(t *testing.T) []string {
	t.Helper()
	m, err := filepath.Glob(filepath.Join(f.tmp, "buildguard-gradle-cache-*"))
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func mustContain(t *testing.T, what, text, want string) {
	t.Helper()
	if !strings.Contains(text, want) {
		t.Errorf("%s does not contain %q:\n%s", what, want, text)
	}
}

func mustNotExist(t *testing.T, path string) {
	t.Helper()
	if _, err := os.Stat(path); !os.IsNotExist(err) {
		t.Errorf("%s exists (stat error %v), want it absent", path, err)
	}
}

// splitCacheDir checks that args ends with --project-cache-dir <tmp> --no-daemon,
// replaces <tmp> by "<cache>" and returns its real value.
func splitCacheDir(t *testing.T, args []string) ([]string, string) {
	t.Helper()
	n := len(args)
	if n < 3 || args[n-3] != "--project-cache-dir" || args[n-1] != "--no-daemon" {
		t.Fatalf("argv does not end with --project-cache-dir <tmp> --no-daemon: %q", args)
	}
	cache := args[n-2]
	out := append(append([]string{}, args[:n-2]...), "<cache>", args[n-1])
	return out, cache
}

var gradleHomeLine = regexp.MustCompile(`fixture: gradle-home=(.+)`)

// gradleExecutable is <gradleHomeDir>/bin/gradle as the fixture reported it.
func gradleExecutable(t *testing.T, stdout string) string {
	t.Helper()
	m := gradleHomeLine.FindStringSubmatch(stdout)
	if m == nil {
		t.Fatalf("the fixture did not report the gradle home:\n%s", stdout)
	}
	return filepath.Join(strings.TrimSpace(m[1]), "bin", "gradle")
}

// safeBuildArgs is the outer command line for reclazzSafeBuild with the fake.
func (f *gradleFixture) safeBuildArgs(extra ...string) []string {
	return append([]string{"reclazzSafeBuild", "-Pbuildguard.executable=" + f.fake.exe}, extra...)
}

// TestGradleInitScript runs complete safe builds in the real Gradle 4.4.1
// (--no-daemon): the fake buildguard runs the real child Gradle. The subtests
// share one fixture and run one after another, as every Gradle invocation
// costs seconds on a small machine.
func TestGradleInitScript(t *testing.T) {
	f := newGradleFixture(t, false)
	var gradleExe string

	t.Run("happy path launches exactly the documented child", func(t *testing.T) {
		f.fake.reset(t)
		res := f.gradle(t, f.env, f.safeBuildArgs(
			"-Pbuildguard.owner=owner-1", "-Pbuildguard.port=4000", "-Pbuildguard.timeoutMs=1234",
			"-Pbuildguard.args=--offline  classes")...)
		if res.exit != 0 {
			t.Fatalf("gradle exit %d, want 0\nstdout:\n%s\nstderr:\n%s", res.exit, res.stdout, res.stderr)
		}
		gradleExe = gradleExecutable(t, res.stdout)
		mustContain(t, "stdout", res.stdout, "fixture: safe-task-projects=[:]")
		mustContain(t, "stdout", res.stdout, "fixture: group=buildguard")
		mustContain(t, "stdout", res.stdout, "buildguard build acknowledged; reload still requires VERIFY evidence.")
		mustContain(t, "stdout", res.stdout, "fake-buildguard: stdout line")
		mustContain(t, "stderr", res.stderr, "fake-buildguard: stderr line")

		call := f.fake.onlyCall(t)
		if call.cwd != f.root {
			t.Errorf("buildguard cwd = %q, want the root project dir %q", call.cwd, f.root)
		}
		if call.active != "1" {
			t.Errorf("%s = %q in buildguard's environment, want 1", activeEnv, call.active)
		}
		if call.cacheExisted != "yes" {
			t.Errorf("the project cache dir existed while buildguard ran: %s, want yes", call.cacheExisted)
		}
		args, cache := splitCacheDir(t, call.args)
		want := []string{"--port", "4000", "--owner", "owner-1", "--timeout-ms", "1234", "--",
			gradleExe, "--offline", "classes", "--project-cache-dir", "<cache>", "--no-daemon"}
		if diff := cmp.Diff(want, args); diff != "" {
			t.Errorf("buildguard argv (-want +got):\n%s", diff)
		}
		if !strings.HasPrefix(filepath.Base(cache), "buildguard-gradle-cache-") || filepath.Dir(cache) != f.tmp {
			t.Errorf("project cache dir %q, want %s/buildguard-gradle-cache-*", cache, f.tmp)
		}
		mustNotExist(t, cache)
		// The child build really ran: it compiled the root project's class.
		if _, err := os.Stat(filepath.Join(f.root, "build", "classes", "java", "main", "p", "A.class")); err != nil {
			t.Errorf("the child build did not compile A.class: %v", err)
		}
	})
	t.Run("up-to-date second run still runs the wrapper", func(t *testing.T) {
		if gradleExe == "" {
			t.Fatal("the happy path did not run or failed; this check needs its gradle home")
		}
		f.fake.reset(t)
		res := f.gradle(t, f.env, f.safeBuildArgs("-Pbuildguard.owner=owner-2", "-Pbuildguard.portFile=agent.port")...)
		if res.exit != 0 {
			t.Fatalf("gradle exit %d, want 0\nstdout:\n%s\nstderr:\n%s", res.exit, res.stdout, res.stderr)
		}
		call := f.fake.onlyCall(t)
		args, cache := splitCacheDir(t, call.args)
		// Defaults: timeout 5000, build arguments "classes"; the port file is
		// resolved against the root project dir.
		want := []string{"--port-file", filepath.Join(f.root, "agent.port"), "--owner", "owner-2", "--timeout-ms", "5000", "--",
			gradleExe, "classes", "--project-cache-dir", "<cache>", "--no-daemon"}
		if diff := cmp.Diff(want, args); diff != "" {
			t.Errorf("buildguard argv (-want +got):\n%s", diff)
		}
		mustNotExist(t, cache)
	})

	t.Run("refused: nested", func(t *testing.T) {
		f.fake.reset(t)
		env := append(f.env[:len(f.env):len(f.env)], activeEnv+"=1")
		res := f.gradle(t, env, f.safeBuildArgs("-Pbuildguard.owner=o", "-Pbuildguard.port=4000")...)
		if res.exit == 0 {
			t.Fatalf("gradle exit 0, want a refusal\nstdout:\n%s", res.stdout)
		}
		mustContain(t, "stderr", res.stderr, "Nested buildguard safe build refused; invoke ordinary tasks in buildguard.args")
		if calls := f.fake.calls(t); len(calls) != 0 {
			t.Errorf("buildguard ran %d times, want never: %+v", len(calls), calls)
		}
	})

	t.Run("JVM shutdown stops buildguard with SIGTERM", func(t *testing.T) {
		f.fake.reset(t)
		ctx, cancel := context.WithTimeout(context.Background(), commandTimeout)
		defer cancel()
		argv := append([]string{"--offline", "--no-daemon", "--console=plain", "--init-script", f.initScript},
			f.safeBuildArgs("-Pbuildguard.owner=wait-term", "-Pbuildguard.port=4000")...)
		cmd := exec.CommandContext(ctx, "gradle", argv...)
		cmd.Dir, cmd.Env = f.root, f.env
		// Its own process group, so that the fake can be cleaned up even if it is orphaned.
		cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
		var out bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &out
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		pgid := cmd.Process.Pid
		defer func() { _ = syscall.Kill(-pgid, syscall.SIGKILL) }()
		waited := make(chan error, 1)
		go func() { waited <- cmd.Wait() }()

		// The gradle start script execs the JVM, so the pid is the JVM's.
		ready := waitForGlob(t, ctx, waited, filepath.Join(f.fake.recDir, "call.*.ready"))
		if err := syscall.Kill(cmd.Process.Pid, syscall.SIGTERM); err != nil {
			t.Fatal(err)
		}
		select {
		case err := <-waited:
			if err == nil {
				t.Errorf("gradle exit 0 after SIGTERM, want a failure")
			}
		case <-ctx.Done():
			t.Fatalf("gradle did not exit after SIGTERM\n%s", out.String())
		}
		term := strings.TrimSuffix(ready, ".ready") + ".term"
		if _, err := os.Stat(term); err != nil {
			t.Errorf("buildguard did not receive SIGTERM when the Gradle JVM shut down: %v\n%s", err, out.String())
		}
	})

	if left := f.leftoverCaches(t); len(left) != 0 {
		t.Errorf("temporary project cache dirs left behind: %q", left)
	}
}

// waitForGlob waits until a file matches pattern and returns it. It fails the
// test when ctx ends or the process behind exited ends first.
func waitForGlob(t *testing.T, ctx context.Context, exited <-chan error, pattern string) string {
	t.Helper()
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	for {
		if m, err := filepath.Glob(pattern); err != nil {
			t.Fatal(err)
		} else if len(m) > 0 {
			return m[0]
		}
		select {
		case <-ctx.Done():
			t.Fatalf("no file matching %s before the deadline", pattern)
		case err := <-exited:
			t.Fatalf("the process exited (%v) before a file matched %s", err, pattern)
		case <-tick.C:
		}
	}
}

// TestGradleInitScriptInDaemon runs the failure and refusal cases with the outer
// build in a Gradle daemon (Gradle's default mode), one daemon for all of them.
// The fake buildguard does not run a child build here.
func TestGradleInitScriptInDaemon(t *testing.T) {
	f := newGradleFixture(t, true)

	t.Run("non-zero exit fails the task, names the owner and shows the output", func(t *testing.T) {
		f.fake.reset(t)
		res := f.gradle(t, f.env, f.safeBuildArgs("-Pbuildguard.owner=exit-3", "-Pbuildguard.port=4000")...)
		if res.exit == 0 {
			t.Fatalf("gradle exit 0 after buildguard exit 3\nstdout:\n%s", res.stdout)
		}
		mustContain(t, "stderr", res.stderr, "buildguard safe build failed (exit 3); retain owner 'exit-3' for recovery. Reload is not confirmed.")
		if strings.Contains(res.stdout, "buildguard build acknowledged") {
			t.Errorf("a failed build logged the acknowledgement:\n%s", res.stdout)
		}
		// buildguard's output reaches the client console although the daemon's
		// own stdout and stderr are not the client's.
		mustContain(t, "stdout", res.stdout, "fake-buildguard: stdout line")
		mustContain(t, "stderr", res.stderr, "fake-buildguard: stderr line")
		call := f.fake.onlyCall(t)
		_, cache := splitCacheDir(t, call.args)
		if call.cacheExisted != "yes" {
			t.Errorf("the project cache dir existed while buildguard ran: %s, want yes", call.cacheExisted)
		}
		mustNotExist(t, cache)
	})

	// Refusals before anything runs: the marker of `other` stays absent and
	// buildguard is never started.
	const alone = "Invoke reclazzSafeBuild alone, without dependencies/finalizers, continuous mode or configuration cache"
	refusals := []struct {
		name string
		args []string
		want string
	}{
		{"extra task on the command line", []string{"other"}, alone + ": the task graph also contains :other"},
		{"dependsOn", []string{"-Ptest.dependsOn=1"}, alone + ": the task graph also contains :other"},
		{"finalizedBy", []string{"-Ptest.finalizedBy=1"}, alone + ": the task graph also contains :other"},
		{"continuous", []string{"--continuous"}, alone + ": continuous mode (-t/--continuous) is on"},
		{"missing owner", []string{"-Pbuildguard.port=4000"},
			"Property buildguard.owner is required: set -Pbuildguard.owner=TOKEN"},
		{"bad owner", []string{"-Pbuildguard.owner=bad owner;x", "-Pbuildguard.port=4000"},
			"Property buildguard.owner is invalid: use 1-64 ASCII letters, digits, _ or - (-Pbuildguard.owner=TOKEN)"},
		{"bad port", []string{"-Pbuildguard.owner=o", "-Pbuildguard.port=65536"},
			"Property buildguard.port must be an integer 1-65535; set -Pbuildguard.port=N"},
		{"port and port file", []string{"-Pbuildguard.owner=o", "-Pbuildguard.port=4000", "-Pbuildguard.portFile=agent.port"},
			"Properties buildguard.port and buildguard.portFile are both set; set only one of them"},
		{"bad timeout", []string{"-Pbuildguard.owner=o", "-Pbuildguard.timeoutMs=60001"},
			"Property buildguard.timeoutMs must be an integer 1-60000; set -Pbuildguard.timeoutMs=N"},
		{"blank args", []string{"-Pbuildguard.owner=o", "-Pbuildguard.args=  "},
			"Property buildguard.args must name a finite build, not continuous mode (-t/--continuous) or nothing"},
		{"continuous args", []string{"-Pbuildguard.owner=o", "-Pbuildguard.args=classes -t"},
			"Property buildguard.args must name a finite build, not continuous mode (-t/--continuous) or nothing"},
	}
	for _, tc := range refusals {
		t.Run("refused: "+tc.name, func(t *testing.T) {
			f.fake.reset(t)
			res := f.gradle(t, f.env, f.safeBuildArgs(tc.args...)...)
			if res.exit == 0 {
				t.Fatalf("gradle exit 0, want a refusal\nstdout:\n%s\nstderr:\n%s", res.stdout, res.stderr)
			}
			mustContain(t, "stderr", res.stderr, tc.want)
			if calls := f.fake.calls(t); len(calls) != 0 {
				t.Errorf("buildguard ran %d times, want never: %+v", len(calls), calls)
			}
			mustNotExist(t, filepath.Join(f.root, "other-ran"))
		})
	}

	// Gradle 4.4.1 on Java 9+ cannot update a reused daemon's environment, so
	// a daemon started by a build that had BUILDGUARD_SAFE_BUILD_ACTIVE set
	// (the shims and every safe build set it) still sees it in a later plain
	// build. The task cannot tell that from a real nesting, so its refusal
	// must say how to get out. Where the daemon does take the new environment,
	// the safe build runs instead.
	t.Run("a daemon started inside a safe build: the refusal says how to get out", func(t *testing.T) {
		f.stopDaemons(t)
		seeded := append(f.env[:len(f.env):len(f.env)], activeEnv+"=1")
		if res := f.gradle(t, seeded, "help"); res.exit != 0 {
			t.Fatalf("seeding a daemon: gradle help exit %d\nstderr:\n%s", res.exit, res.stderr)
		}
		f.fake.reset(t)
		res := f.gradle(t, f.env, f.safeBuildArgs("-Pbuildguard.owner=stale-env", "-Pbuildguard.port=4000")...)
		if res.exit == 0 {
			f.fake.onlyCall(t) // the daemon took the new environment: the build ran
			return
		}
		mustContain(t, "stderr", res.stderr, "Nested buildguard safe build refused")
		mustContain(t, "stderr", res.stderr, "If no safe build is running, this Gradle daemon kept BUILDGUARD_SAFE_BUILD_ACTIVE from the safe build that started it: run gradle --stop, or add --no-daemon")
		if calls := f.fake.calls(t); len(calls) != 0 {
			t.Errorf("buildguard ran %d times after the refusal: %+v", len(calls), calls)
		}
		f.stopDaemons(t)
		f.fake.reset(t)
		if res := f.gradle(t, f.env, f.safeBuildArgs("-Pbuildguard.owner=after-stop", "-Pbuildguard.port=4000")...); res.exit != 0 {
			t.Fatalf("after gradle --stop the safe build still fails: exit %d\nstderr:\n%s", res.exit, res.stderr)
		}
		f.fake.onlyCall(t)
	})

	if left := f.leftoverCaches(t); len(left) != 0 {
		t.Errorf("temporary project cache dirs left behind: %q", left)
	}
}

// stopDaemons stops the fixture's Gradle daemons and waits until they are gone.
func (f *gradleFixture) stopDaemons(t *testing.T) {
	t.Helper()
	run(t, f.root, f.env, "gradle", "--stop")
	waitForDaemonExit(t, f.home)
}

// daemonExitTimeout bounds the wait for a stopped Gradle daemon to go away.
const daemonExitTimeout = 30 * time.Second

// waitForDaemonExit waits until every daemon that ran under the Gradle user
// home has exited, so that removing the temp dirs does not race its last
// writes. `gradle --stop` returns before the daemon process is gone. The daemon
// is not our child, so its exit is observed by polling /proc; a daemon still
// there after daemonExitTimeout is killed.
func waitForDaemonExit(t *testing.T, home string) {
	t.Helper()
	logs, err := filepath.Glob(filepath.Join(home, "daemon", "*", "daemon-*.out.log"))
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range logs {
		pid, err := strconv.Atoi(strings.TrimSuffix(strings.TrimPrefix(filepath.Base(l), "daemon-"), ".out.log"))
		if err != nil {
			t.Errorf("daemon log %s does not name a pid", l)
			continue
		}
		if left := wait.GoneWithin(daemonExitTimeout, pid); len(left) > 0 {
			t.Errorf("gradle daemon %d still running %s after --stop; killing it", pid, daemonExitTimeout)
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
	}
}
