package acceptance

import (
	"fmt"
	"html"
	"os"
	"path/filepath"

	"github.com/buildguard/buildguard/harness/jvm"
)

// sourceVersion is the state of the two module sources: both return n, or
// module b does not compile (broken).
type sourceVersion struct {
	a, b   int
	broken bool // b references the undefined identifier missingSymbol
}

// projectDirName is the lane's project root under the work dir; the space
// in the path is deliberate.
func projectDirName(l Lane) string { return string(l) + " project with spaces" }

// javaSourceA is module a's only class, in the default package.
func javaSourceA(n int) string { return jvm.Class("A", n) }

// javaSourceB is module b's only class. B does not depend on A in source:
// build order alone makes "a compiles, then b fails".
func javaSourceB(n int, broken bool) string {
	if broken {
		return jvm.BrokenClass("B")
	}
	return jvm.Class("B", n)
}

// gradleSettings names the root project safety and includes a and b.
const gradleSettings = `rootProject.name = 'safety'
include 'a', 'b'
`

// gradleBuild is the root build script in Gradle 4.4.1 DSL (no tasks.named,
// no providers.gradleProperty): every subproject is a java project, and
// :b:compileJava runs after :a:compileJava and sleeps 1500 ms first, which
// widens the window in which a's new classes sit on disk before b fails.
const gradleBuild = `subprojects {
    apply plugin: 'java'
}

project(':b') {
    compileJava {
        dependsOn ':a:compileJava'
        doFirst {
            Thread.sleep(1500)
        }
    }
}
`

// Pinned plugin versions present in Debian's /usr/share/maven-repo.
const (
	mavenCompilerVersion  = "3.10.1"
	mavenResourcesVersion = "3.3.0"
)

// mavenRootPOM is the reactor root: packaging pom, modules a and b, release
// 17, compiler and resources plugins pinned.
func mavenRootPOM() string {
	return `<?xml version="1.0" encoding="UTF-8"?>
<project xmlns="http://maven.apache.org/POM/4.0.0"
         xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance"
         xsi:schemaLocation="http://maven.apache.org/POM/4.0.0 http://maven.apache.org/xsd/maven-4.0.0.xsd">
  <modelVersion>4.0.0</modelVersion>
  <groupId>safety</groupId>
  <artifactId>root</artifactId>
  <version>1</version>
  <packaging>pom</packaging>
  <modules>
    <module>a</module>
    <module>b</module>
  </modules>
  <properties>
    <maven.compiler.release>17</maven.compiler.release>
    <project.build.sourceEncoding>UTF-8</project.build.sourceEncoding>
  </properties>
  <build>
    <pluginManagement>
      <plugins>
        <plugin>
          <groupId>org.apache.maven.plugins</groupId>
          <artifactId>maven-compiler-plugin</artifactId>
          <version>` + mavenCompilerVersion + `</version>
        </plugin>
        <plugin>
          <groupId>org.apache.maven.plugins</groupId>
          <artifactId>maven-resources-plugin</artifactId>
          <version>` + mavenResourcesVersion + `</version>
        </plugin>
      </plugins>
    </pluginManagement>
  </build>
</project>
`
}

// mavenModulePOM names only the parent and the module's artifactId.
func mavenModulePOM(module string) string {
	return `<?xml version="1.0" encoding="UTF-8"?>
<project xmlns="http://maven.apache.org/POM/4.0.0"
         xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance"
         xsi:schemaLocation="http://maven.apache.org/POM/4.0.0 http://maven.apache.org/xsd/maven-4.0.0.xsd">
  <modelVersion>4.0.0</modelVersion>
  <parent>
    <groupId>safety</groupId>
    <artifactId>root</artifactId>
    <version>1</version>
  </parent>
  <artifactId>` + html.EscapeString(module) + `</artifactId>
</project>
`
}

// project is one lane's generated two-module project.
type project struct {
	lane Lane
	root string // <work>/<lane> project with spaces
}

// sourceA and sourceB are the module sources.
func (p project) sourceA() string { return filepath.Join(p.root, "a", "src", "main", "java", "A.java") }
func (p project) sourceB() string { return filepath.Join(p.root, "b", "src", "main", "java", "B.java") }

// outA and outB are the module class output dirs the agent watches.
func (p project) outA() string { return p.out("a") }
func (p project) outB() string { return p.out("b") }

func (p project) out(module string) string {
	if p.lane == LaneMaven {
		return filepath.Join(p.root, module, "target", "classes")
	}
	return filepath.Join(p.root, module, "build", "classes", "java", "main")
}

// classA and classB are the compiled classes.
func (p project) classA() string { return filepath.Join(p.outA(), "A.class") }
func (p project) classB() string { return filepath.Join(p.outB(), "B.class") }

// appDir holds App.java; appClasses its compiled output.
func (p project) appDir() string     { return filepath.Join(p.root, "app") }
func (p project) appClasses() string { return filepath.Join(p.root, "app", "classes") }

// log is a named log in the project root.
func (p project) log(name string) string { return filepath.Join(p.root, name) }

// writeProject creates the project with sources at v1. The root must not
// exist yet.
func writeProject(p project) error {
	if err := os.Mkdir(p.root, 0o755); err != nil {
		return fmt.Errorf("creating the %s project: %w", p.lane, err)
	}
	files := map[string]string{
		filepath.Join("app", "App.java"): jvm.App,
	}
	switch p.lane {
	case LaneGradle:
		files["settings.gradle"] = gradleSettings
		files["build.gradle"] = gradleBuild
	case LaneMaven:
		files["pom.xml"] = mavenRootPOM()
		files[filepath.Join("a", "pom.xml")] = mavenModulePOM("a")
		files[filepath.Join("b", "pom.xml")] = mavenModulePOM("b")
	default:
		return fmt.Errorf("%w: %q", ErrUnknownLane, p.lane)
	}
	for rel, content := range files {
		if err := writeFile(filepath.Join(p.root, rel), content); err != nil {
			return err
		}
	}
	return setSources(p, sourceVersion{a: 1, b: 1})
}

// setSources writes A.java and B.java for v.
func setSources(p project, v sourceVersion) error {
	if err := writeFile(p.sourceA(), javaSourceA(v.a)); err != nil {
		return err
	}
	return writeFile(p.sourceB(), javaSourceB(v.b, v.broken))
}

// writeFile writes content to path, creating its parent dirs.
func writeFile(path, content string) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return fmt.Errorf("creating %s: %w", filepath.Dir(path), err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	return nil
}
