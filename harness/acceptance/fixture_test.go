package acceptance

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func readFile(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestWriteProjectGradle(t *testing.T) {
	t.Parallel()
	p := project{lane: LaneGradle, root: filepath.Join(t.TempDir(), projectDirName(LaneGradle))}
	if !strings.Contains(p.root, "gradle project with spaces") {
		t.Fatalf("project root %q lacks the spaces", p.root)
	}
	if err := writeProject(p); err != nil {
		t.Fatal(err)
	}
	settings := readFile(t, filepath.Join(p.root, "settings.gradle"))
	for _, want := range []string{"rootProject.name = 'safety'", "include 'a', 'b'"} {
		if !strings.Contains(settings, want) {
			t.Errorf("settings.gradle lacks %q:\n%s", want, settings)
		}
	}
	build := readFile(t, filepath.Join(p.root, "build.gradle"))
	for _, want := range []string{"apply plugin: 'java'", "project(':b')", "dependsOn ':a:compileJava'", "Thread.sleep(1500)"} {
		if !strings.Contains(build, want) {
			t.Errorf("build.gradle lacks %q:\n%s", want, build)
		}
	}
	// Gradle 4.4.1 has neither API.
	for _, banned := range []string{"tasks.named", "providers.gradleProperty", "tasks.register"} {
		if strings.Contains(build, banned) {
			t.Errorf("build.gradle uses %q, which Gradle 4.4.1 lacks", banned)
		}
	}
	if got := readFile(t, p.sourceA()); !strings.Contains(got, "return 1;") || !strings.HasPrefix(got, "public class A {") {
		t.Errorf("A.java at v1:\n%s", got)
	}
	if got := readFile(t, p.sourceB()); !strings.Contains(got, "return 1;") || strings.Contains(got, "package ") {
		t.Errorf("B.java at v1 (default package):\n%s", got)
	}
	app := readFile(t, filepath.Join(p.appDir(), "App.java"))
	for _, want := range []string{`"VALUES=" + a.value() + ":" + b.value()`, "Thread.sleep(25)"} {
		if !strings.Contains(app, want) {
			t.Errorf("App.java lacks %q", want)
		}
	}
	if want := filepath.Join(p.root, "a", "build", "classes", "java", "main"); p.outA() != want {
		t.Errorf("outA = %q, want %q", p.outA(), want)
	}
	if err := writeProject(p); err == nil {
		t.Error("writeProject over an existing project succeeded; it must refuse")
	}
}

func TestWriteProjectMaven(t *testing.T) {
	t.Parallel()
	p := project{lane: LaneMaven, root: filepath.Join(t.TempDir(), projectDirName(LaneMaven))}
	if err := writeProject(p); err != nil {
		t.Fatal(err)
	}
	root := readFile(t, filepath.Join(p.root, "pom.xml"))
	for _, want := range []string{
		"<packaging>pom</packaging>", "<module>a</module>", "<module>b</module>",
		"<maven.compiler.release>17</maven.compiler.release>",
		"<artifactId>maven-compiler-plugin</artifactId>\n          <version>3.10.1</version>",
		"<artifactId>maven-resources-plugin</artifactId>\n          <version>3.3.0</version>",
	} {
		if !strings.Contains(root, want) {
			t.Errorf("pom.xml lacks %q:\n%s", want, root)
		}
	}
	for _, m := range []string{"a", "b"} {
		pom := readFile(t, filepath.Join(p.root, m, "pom.xml"))
		if !strings.Contains(pom, "<artifactId>root</artifactId>") || !strings.Contains(pom, "<artifactId>"+m+"</artifactId>") {
			t.Errorf("%s/pom.xml must name the parent and itself:\n%s", m, pom)
		}
	}
	if want := filepath.Join(p.root, "b", "target", "classes", "B.class"); p.classB() != want {
		t.Errorf("classB = %q, want %q", p.classB(), want)
	}
}

func TestSetSourcesBroken(t *testing.T) {
	t.Parallel()
	p := project{lane: LaneGradle, root: filepath.Join(t.TempDir(), "p")}
	if err := writeProject(p); err != nil {
		t.Fatal(err)
	}
	if err := setSources(p, sourceVersion{a: 2, broken: true}); err != nil {
		t.Fatal(err)
	}
	if got := readFile(t, p.sourceA()); !strings.Contains(got, "return 2;") {
		t.Errorf("A.java at v2:\n%s", got)
	}
	b := readFile(t, p.sourceB())
	if !strings.Contains(b, "return missingSymbol;") {
		t.Errorf("broken B.java must use missingSymbol:\n%s", b)
	}
	if strings.Contains(b, "A") {
		t.Errorf("B must not depend on A in source:\n%s", b)
	}
}
