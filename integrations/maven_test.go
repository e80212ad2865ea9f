//go:build unix

package integrations

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
)

const tinyPOM = `<project xmlns="http://maven.apache.org/POM/4.0.0">
  <modelVersion>4.0.0</modelVersion>
  <groupId>buildguard.test</groupId>
  <artifactId>tiny</artifactId>
  <version>1</version>
</project>
`

// mavenMirror makes a per-file symlink copy of the Debian Maven repository, so
// Maven can run offline without ever writing into /usr/share/maven-repo or ~/.m2.
func mavenMirror(t *testing.T) string {
	t.Helper()
	const debianRepo = "/usr/share/maven-repo"
	if fi, err := os.Stat(debianRepo); err != nil || !fi.IsDir() {
		t.Fatalf("%s is missing; install it with: %s", debianRepo, installHint)
	}
	dst := filepath.Join(realDir(t, t.TempDir()), "maven repo")
	res := run(t, "/", baseEnv(), "cp", "-rs", debianRepo, dst)
	if res.exit != 0 {
		t.Fatalf("mirroring %s: exit %d: %s", debianRepo, res.exit, res.stderr)
	}
	return dst
}

// TestMvnShimRealMaven runs the mvn shim with a fake buildguard that runs its
// child, so the child is the real Maven 3.8.7: a valid project validates (exit
// 0) and a broken POM's exit code comes back through the shim.
func TestMvnShimRealMaven(t *testing.T) {
	t.Parallel()
	requireTool(t, "mvn", "java")
	mvn, err := exec.LookPath("mvn")
	if err != nil {
		t.Fatal(err)
	}
	repo := mavenMirror(t)
	base := realDir(t, t.TempDir())
	fake := newFakeBuildguard(t, base, "fake buildguard")
	env := baseEnv("BUILDGUARD=" + fake.exe)

	for _, tc := range []struct {
		name, pom string
		wantExit  int
	}{
		{"valid project", tinyPOM, 0},
		{"broken pom", "<project>", 1},
	} {
		dir := filepath.Join(base, "maven "+tc.name)
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, "pom.xml"), []byte(tc.pom), 0o644); err != nil {
			t.Fatal(err)
		}
		fake.reset(t)
		mvnArgs := []string{"-o", "-q", "-Dmaven.repo.local=" + repo, "validate"}
		res := run(t, dir, env, append([]string{shimPath(t, "buildguard-mvn"), "--owner", "maven-owner", "--"}, mvnArgs...)...)
		if res.exit != tc.wantExit {
			t.Errorf("%s: exit %d, want %d\nstdout:\n%s\nstderr:\n%s", tc.name, res.exit, tc.wantExit, res.stdout, res.stderr)
		}
		if tc.wantExit != 0 {
			mustContain(t, tc.name+" output", res.stdout+res.stderr, "Non-readable POM")
		}
		call := fake.onlyCall(t)
		want := append([]string{"--owner", "maven-owner", "--", mvn}, mvnArgs...)
		if diff := cmp.Diff(want, call.args); diff != "" {
			t.Errorf("%s: buildguard argv (-want +got):\n%s", tc.name, diff)
		}
		if call.cwd != dir || call.active != "1" {
			t.Errorf("%s: buildguard ran in %q with %s=%q, want %q and 1", tc.name, call.cwd, activeEnv, call.active, dir)
		}
	}
}
