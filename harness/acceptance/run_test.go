//go:build unix

package acceptance

import (
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

func TestRunRefusesExistingWorkDir(t *testing.T) {
	t.Parallel()
	work := t.TempDir()
	marker := filepath.Join(work, "earlier-evidence.json")
	if err := os.WriteFile(marker, []byte("{}"), 0o644); err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	_, err := Run(context.Background(), Config{WorkDir: work, RepoDir: t.TempDir(), Buildguard: "/nonexistent", Out: &out, NoInstall: true})
	if !errors.Is(err, ErrWorkDirExists) || !strings.Contains(err.Error(), "use a fresh work dir to preserve earlier evidence") {
		t.Fatalf("err = %v, want ErrWorkDirExists", err)
	}
	if got := readFile(t, marker); got != "{}" {
		t.Errorf("earlier evidence changed: %q", got)
	}
}

func TestRunMissingIntegrationIsAFailure(t *testing.T) {
	t.Parallel()
	// A repo dir without integrations/: a missing prerequisite, never a pass.
	work := filepath.Join(t.TempDir(), "w")
	bin := filepath.Join(t.TempDir(), "buildguard")
	if err := os.WriteFile(bin, []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	ev, err := Run(context.Background(), Config{
		Lanes: []Lane{LaneGradle}, WorkDir: work, RepoDir: t.TempDir(), Buildguard: bin,
		AgentJar: bin, Out: &out, NoInstall: true,
	})
	if !errors.Is(err, ErrPrerequisite) {
		t.Fatalf("err = %v, want ErrPrerequisite", err)
	}
	if !strings.Contains(err.Error(), "buildguard.init.gradle") {
		t.Errorf("err %q does not name the init script", err)
	}
	if ev == nil || len(ev.Lanes) != 0 || strings.Contains(out.String(), "PASS") {
		t.Errorf("a failed run reported a pass: %+v\n%s", ev, out.String())
	}
}

func TestParseJavaMajor(t *testing.T) {
	t.Parallel()
	for text, want := range map[string]int{
		`openjdk version "17.0.15" 2025-04-15`: 17,
		`java version "1.8.0_402"`:             8,
		`openjdk version "21" 2023-09-19`:      21,
	} {
		got, err := parseJavaMajor(text)
		if err != nil || got != want {
			t.Errorf("parseJavaMajor(%q) = %d, %v; want %d", text, got, err, want)
		}
	}
	if _, err := parseJavaMajor("no java here"); err == nil {
		t.Error("parseJavaMajor accepted text without a version")
	}
}

func TestPackagesForIncludesPluginSet(t *testing.T) {
	t.Parallel()
	got := strings.Join(packagesFor([]missing{{"gradle", pkgGradle}}), " ")
	if got != "gradle libmaven-compiler-plugin-java libmaven-resources-plugin-java libmaven-jar-plugin-java junit5" {
		t.Errorf("packagesFor(gradle) = %q", got)
	}
	if got := strings.Join(packagesFor([]missing{{"javac", pkgJDK}}), " "); got != pkgJDK {
		t.Errorf("packagesFor(javac) = %q", got)
	}
}

func TestAppArgs(t *testing.T) {
	t.Parallel()
	p := project{lane: LaneMaven, root: "/w/maven project with spaces"}
	got := appArgs("java", "/j/agent.jar", p)
	want := "-javaagent:/j/agent.jar=watchDirs=/w/maven project with spaces/a/target/classes;/w/maven project with spaces/b/target/classes,startupDelaySec=1,debounceMs=100,portFile=/w/maven project with spaces/agent.port"
	if len(got) != 5 || got[1] != want || got[4] != "App" {
		t.Fatalf("appArgs =\n%q\nwant agent option\n%q", got, want)
	}
	if cp := got[3]; cp != "/w/maven project with spaces/a/target/classes:/w/maven project with spaces/b/target/classes:/w/maven project with spaces/app/classes" {
		t.Errorf("classpath = %q", cp)
	}
}

func TestPreflightNamesTheInstallCommand(t *testing.T) {
	t.Parallel()
	var out bytes.Buffer
	c := Config{
		Lanes: []Lane{LaneGradle, LaneMaven}, Java: "java", Javac: "javac",
		Gradle: filepath.Join(t.TempDir(), "no-gradle"), Maven: "mvn",
		MavenRepoSource: t.TempDir(), // empty: no compiler or resources plugin
		NoInstall:       true,
	}
	err := preflight(context.Background(), c, &out)
	if !errors.Is(err, ErrPrerequisite) {
		t.Fatalf("err = %v, want ErrPrerequisite", err)
	}
	msg := err.Error()
	for _, want := range []string{
		"gradle", "maven-compiler-plugin 3.10.1", "maven-resources-plugin 3.3.0",
		"org.junit:junit-bom:debian",
		"install with: apt-get update && apt-get install -y gradle libmaven-compiler-plugin-java libmaven-resources-plugin-java libmaven-jar-plugin-java junit5",
	} {
		if !strings.Contains(msg, want) {
			t.Errorf("preflight error lacks %q:\n%s", want, msg)
		}
	}
	if out.Len() != 0 {
		t.Errorf("preflight with NoInstall printed %q; it must not install", out.String())
	}
}

func TestProveMavenRepositoryFailsOnAnEmptyRepository(t *testing.T) {
	t.Parallel()
	mvn, err := exec.LookPath("mvn")
	if err != nil {
		t.Fatalf("mvn not found: install with: %s", installCommand([]string{pkgMaven}))
	}
	dir := filepath.Join(t.TempDir(), "probe")
	err = proveMavenRepository(context.Background(), mvn, t.TempDir(), dir)
	if !errors.Is(err, ErrPrerequisite) {
		t.Fatalf("err = %v, want ErrPrerequisite", err)
	}
	if want := "install with: apt-get update && apt-get install -y gradle libmaven-compiler-plugin-java libmaven-resources-plugin-java libmaven-jar-plugin-java junit5"; !strings.Contains(err.Error(), want) {
		t.Errorf("err lacks %q:\n%v", want, err)
	}
	// The probe really ran Maven: its project is there and nothing compiled.
	if _, err := os.Stat(filepath.Join(dir, "pom.xml")); err != nil {
		t.Errorf("probe project missing: %v", err)
	}
	if _, err := os.Stat(filepath.Join(dir, "a", "target", "classes", "ProbeA.class")); err == nil {
		t.Error("an empty repository compiled the probe")
	}
}

// The probe passes on Debian's repository, and fails, naming junit5 in the
// install command, on the same repository without junit5's
// org.junit:junit-bom:debian, which Debian's plugin POMs import.
func TestProveMavenRepositoryNeedsJUnitBOM(t *testing.T) {
	t.Parallel()
	mvn, err := exec.LookPath("mvn")
	if err != nil {
		t.Fatalf("mvn not found: install with: %s", installCommand([]string{pkgMaven}))
	}
	repo := filepath.Join(t.TempDir(), "repo")
	if _, err := mirrorRepository("/usr/share/maven-repo", repo); err != nil {
		t.Fatalf("mirroring Debian's Maven repository: %v; install with: %s", err, installCommand(offlineBuildPackages))
	}
	if err := proveMavenRepository(context.Background(), mvn, repo, filepath.Join(t.TempDir(), "probe")); err != nil {
		t.Fatal(err)
	}
	bom := filepath.Join(repo, "org", "junit", "junit-bom")
	if _, err := os.Stat(bom); err != nil {
		t.Fatalf("Debian's repository has no junit-bom (%v); install with: %s", err, installCommand(offlineBuildPackages))
	}
	if err := os.RemoveAll(bom); err != nil {
		t.Fatal(err)
	}
	err = proveMavenRepository(context.Background(), mvn, repo, filepath.Join(t.TempDir(), "probe"))
	if !errors.Is(err, ErrPrerequisite) || !strings.Contains(err.Error(), " junit5") {
		t.Fatalf("without junit-bom: err = %v, want ErrPrerequisite naming junit5", err)
	}
	if !strings.Contains(err.Error(), "junit-bom") {
		t.Errorf("the error does not show Maven's reason:\n%v", err)
	}
}
