//go:build linux

package integrations

import (
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/buildguard/buildguard/harness/fakeagent"
	"github.com/buildguard/buildguard/internal/proc"
	"github.com/buildguard/buildguard/internal/testsupport/testbin"
)

// TestWrapperRealBuildsAreOK runs the real buildguard around real Gradle
// 4.4.1 with its daemon on (no --no-daemon) and real Maven 3.8.7, offline:
// an ordinary build is still ok under the rule "exit 0 and an empty process
// group" (docs/decisions.md#D12): exit 0, BUILD ok acknowledged, the classes
// compiled. The Gradle daemon, which leaves the build's process group, is
// not counted as a straggler and not killed: it still runs after the build.
func TestWrapperRealBuildsAreOK(t *testing.T) {
	t.Parallel()
	requireTool(t, "gradle", "mvn", "java", "go")
	base := realDir(t, t.TempDir())
	exe := testbin.Build(t, filepath.Join(base, "bin"))
	repo := mavenMirror(t)
	src := map[string]string{"src/main/java/p/A.java": "package p;\npublic class A {}\n"}

	t.Run("gradle daemon", func(t *testing.T) {
		dir := filepath.Join(base, "gradle project")
		home := filepath.Join(base, "gradle home")
		writeFiles(t, dir, src, map[string]string{
			"settings.gradle": "rootProject.name = 'demo'\n",
			"build.gradle":    "apply plugin: 'java'\n",
			// A small daemon that ends itself if the cleanup below never runs.
			"gradle.properties": "org.gradle.jvmargs=-Xmx256m\norg.gradle.daemon.idletimeout=120000\n",
		})
		t.Cleanup(func() { stopGradleDaemons(t, home) })
		agent := fakeagent.NewServer(t)
		res := run(t, dir, baseEnv("GRADLE_USER_HOME="+home), exe, "--port-file", agent.PortFile(), "--owner", "gradle-owner", "--",
			"gradle", "--offline", "-q", "classes")
		checkOK(t, res, agent, filepath.Join(dir, "build/classes/java/main/p/A.class"))
		pids := gradleDaemons(t, home)
		if len(pids) == 0 {
			t.Fatalf("no Gradle daemon log under %s: the build did not use a daemon", home)
		}
		for _, pid := range pids {
			if proc.Gone(pid) {
				t.Errorf("the Gradle daemon (pid %d) was killed by the build's end", pid)
			}
		}
	})

	t.Run("maven", func(t *testing.T) {
		dir := filepath.Join(base, "maven project")
		pom := strings.Replace(tinyPOM, "</version>", "</version>\n  <properties><maven.compiler.source>17</maven.compiler.source><maven.compiler.target>17</maven.compiler.target></properties>", 1)
		writeFiles(t, dir, src, map[string]string{"pom.xml": pom})
		agent := fakeagent.NewServer(t)
		res := run(t, dir, baseEnv(), exe, "--port-file", agent.PortFile(), "--owner", "maven-owner", "--",
			"mvn", "-o", "-q", "-B", "-Dmaven.repo.local="+repo, "compile")
		checkOK(t, res, agent, filepath.Join(dir, "target/classes/p/A.class"))
	})
}

// checkOK requires a confirmed ok build that compiled class.
func checkOK(t *testing.T, res result, agent *fakeagent.Server, class string) {
	t.Helper()
	if res.exit != 0 || strings.Contains(res.stderr, "did not complete safely") {
		t.Fatalf("exit %d, want 0\nstdout:\n%s\nstderr:\n%s", res.exit, res.stdout, res.stderr)
	}
	cmds := strings.Join(agent.Commands(), "\n")
	if !strings.Contains(cmds, "BUILD ok ") || strings.Contains(cmds, "BUILD failed") {
		t.Errorf("agent received %q, want BUILD started and BUILD ok", cmds)
	}
	if _, err := os.Stat(class); err != nil {
		t.Errorf("the build did not compile: %v", err)
	}
}

// gradleDaemons returns the pids of the daemons that logged under home.
func gradleDaemons(t testing.TB, home string) []int {
	t.Helper()
	logs, err := filepath.Glob(filepath.Join(home, "daemon", "*", "daemon-*.out.log"))
	if err != nil {
		t.Fatal(err)
	}
	re := regexp.MustCompile(`daemon-(\d+)\.out\.log$`)
	var pids []int
	for _, l := range logs {
		if m := re.FindStringSubmatch(l); m != nil {
			if pid, err := strconv.Atoi(m[1]); err == nil {
				pids = append(pids, pid)
			}
		}
	}
	return pids
}

// stopGradleDaemons kills the daemons private to home, which this test
// started.
func stopGradleDaemons(t testing.TB, home string) {
	for _, pid := range gradleDaemons(t, home) {
		if b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/environ"); err == nil && strings.Contains(string(b), "GRADLE_USER_HOME="+home) {
			syscall.Kill(pid, syscall.SIGKILL)
		}
	}
}
