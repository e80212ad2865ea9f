//go:build unix

package integrations

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/buildguard/buildguard/harness/fakeagent"
	"github.com/buildguard/buildguard/internal/testsupport/testbin"
)

// TestShimsWithRealBuildguard runs both shims with the real buildguard binary
// (not the fake of the other tests) against an agent on a real socket, with
// the real Gradle 4.4.1 and Maven 3.8.7 as the child: an argument holding
// spaces and shell syntax reaches the build tool as one unchanged argument and
// is never run by a shell, the build sees BUILDGUARD_SAFE_BUILD_ACTIVE=1, and
// the agent gets BUILD started and BUILD ok for the owner.
func TestShimsWithRealBuildguard(t *testing.T) {
	t.Parallel()
	requireTool(t, "gradle", "mvn", "java", "go")
	base := realDir(t, t.TempDir())
	bin := filepath.Join(base, "bin dir")
	if err := os.MkdirAll(bin, 0o755); err != nil {
		t.Fatal(err)
	}
	exe := testbin.Build(t, bin)
	repo := mavenMirror(t)
	pwned := filepath.Join(base, "PWNED")
	tricky := "space ; $(touch " + pwned + ") `touch " + pwned + "` \"q\" 'q'"

	for _, tc := range []struct {
		shim  string
		files map[string]string
		args  []string
	}{
		{
			shim: "buildguard-gradle",
			files: map[string]string{
				"settings.gradle": "rootProject.name = 'demo'\n",
				"build.gradle": "task show { doLast {\n" +
					"  println \"msg=[${findProperty('msg')}]\"\n" +
					"  println \"active=[${System.getenv('BUILDGUARD_SAFE_BUILD_ACTIVE')}]\"\n" +
					"} }\n",
			},
			args: []string{"--offline", "--no-daemon", "-q", "show", "-Pmsg=" + tricky},
		},
		{
			shim: "buildguard-mvn",
			files: map[string]string{
				// Maven prints the interpolated name: "Building msg=[...] 1".
				"pom.xml": strings.Replace(tinyPOM, "</version>", "</version>\n  <name>msg=[${msg}]</name>", 1),
			},
			args: []string{"-o", "-B", "-Dmaven.repo.local=" + repo, "-Dmsg=" + tricky, "validate"},
		},
	} {
		t.Run(tc.shim, func(t *testing.T) {
			dir := filepath.Join(base, tc.shim+" project")
			writeFiles(t, dir, tc.files)
			agent := fakeagent.NewServer(t)
			env := baseEnv("BUILDGUARD="+exe, "GRADLE_USER_HOME="+filepath.Join(base, "gradle-home"))
			argv := append([]string{shimPath(t, tc.shim), "--port-file", agent.PortFile(), "--owner", "real-owner", "--"}, tc.args...)
			res := run(t, dir, env, argv...)
			if res.exit != 0 {
				t.Fatalf("exit %d, want 0\nstdout:\n%s\nstderr:\n%s", res.exit, res.stdout, res.stderr)
			}
			mustContain(t, "stderr", res.stderr, "buildguard: build owner: real-owner; ")
			switch tc.shim {
			case "buildguard-gradle":
				mustContain(t, "stdout", res.stdout, "msg=["+tricky+"]")
				mustContain(t, "stdout", res.stdout, "active=[1]")
			case "buildguard-mvn":
				mustContain(t, "stdout", res.stdout, "Building msg=["+tricky+"] 1")
			}
			mustNotExist(t, pwned)
			cmds := strings.Join(agent.Commands(), "\n")
			for _, re := range []string{
				`(?m)^BUILD started request=[0-9a-f-]{36} owner=real-owner$`,
				`(?m)^BUILD ok request=[0-9a-f-]{36} owner=real-owner$`,
			} {
				if !regexp.MustCompile(re).MatchString(cmds) {
					t.Errorf("agent received %q, want a line matching %s", cmds, re)
				}
			}
		})
	}
}
