package diagnostics

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/rogpeppe/go-internal/txtar"
)

// capture re-captures the real builds of the corpus:
//
//	go test ./service/diagnostics/ -run TestCaptureCorpus -capture
//
// It needs javac 17, Debian's Gradle 4.4.1 and Maven 3.8.7 with
// /usr/share/maven-repo (apt-get install -y gradle maven
// libmaven-compiler-plugin-java libmaven-resources-plugin-java
// libmaven-jar-plugin-java junit5) and rewrites testdata/corpus/*.txtar of
// the cases below; the samples written from documented formats are left
// alone. Run TestCorpus with -update afterwards to renew the summaries.
var capture = flag.Bool("capture", false, "re-capture the real builds of testdata/corpus (needs javac, gradle, mvn)")

// captureBase is where the captured projects live; each case's directory
// name has a space (and some non-ASCII letters), as users' paths do.
const captureBase = "/tmp/buildguard-corpus"

// want is one diagnostic a corpus entry must yield: its severity, file
// (relative to the project), line, and a part of its message.
type want struct {
	severity, file string
	line           int
	message        string
}

func (w want) String() string {
	return fmt.Sprintf("%s\t%s\t%d\t%s", w.severity, w.file, w.line, w.message)
}

// corpusCase is one real build: its files, the command and what it must
// report.
type corpusCase struct {
	name    string
	dirName string // the project directory's name under captureBase
	tool    string // javac, gradle, maven
	files   map[string]string
	// steps run before the captured command (javac of an annotation
	// processor); their output is not captured.
	steps [][]string
	args  []string
	wants []want
	exit  int // the exit code the build must have
}

const gradleTwoModules = "rootProject.name = 'corpus'\ninclude 'a', 'b'\n"

func gradleBuild(extra string) string {
	return `subprojects {
    apply plugin: 'java'
    tasks.withType(JavaCompile) {
        options.encoding = 'UTF-8'
` + extra + `    }
}
`
}

func mavenRoot(extra string) string {
	return `<?xml version="1.0" encoding="UTF-8"?>
<project xmlns="http://maven.apache.org/POM/4.0.0">
  <modelVersion>4.0.0</modelVersion>
  <groupId>corpus</groupId>
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
          <version>3.10.1</version>
` + extra + `        </plugin>
        <plugin>
          <groupId>org.apache.maven.plugins</groupId>
          <artifactId>maven-resources-plugin</artifactId>
          <version>3.3.0</version>
        </plugin>
      </plugins>
    </pluginManagement>
  </build>
</project>
`
}

func mavenModule(name, deps string) string {
	return `<?xml version="1.0" encoding="UTF-8"?>
<project xmlns="http://maven.apache.org/POM/4.0.0">
  <modelVersion>4.0.0</modelVersion>
  <parent>
    <groupId>corpus</groupId>
    <artifactId>root</artifactId>
    <version>1</version>
  </parent>
  <artifactId>` + name + `</artifactId>
` + deps + `</project>
`
}

// Sources shared by the cases.
const (
	srcA           = "public class A {\n    public int value() {\n        return 1;\n    }\n}\n"
	srcB           = "public class B {\n    public int value() {\n        return 2;\n    }\n}\n"
	srcBMissing    = "public class B {\n    public int value() {\n        return missingSymbol;\n    }\n}\n"
	srcBSyntax     = "public class B {\n    public int value() {\n        return 2\n    }\n}\n"
	srcBMismatch   = "public class B {\n    public int value() {\n        String s = 42;\n        return s;\n    }\n}\n"
	srcAMissing    = "public class A {\n    public int value() {\n        return alsoMissing;\n    }\n}\n"
	srcDeprecated  = "public class Old {\n    @Deprecated\n    public static int legacy() {\n        return 1;\n    }\n}\n"
	srcUsesOld     = "public class Uses {\n    public int value() {\n        return Old.legacy() + new java.util.Date(2020, 1, 1).getYear();\n    }\n}\n"
	srcTestBroken  = "public class BTest {\n    void check() {\n        int n = new B().valu();\n    }\n}\n"
	srcNonASCII    = "public class Grüße {\n    public int größe() {\n        return straße;\n    }\n}\n"
	srcProcessor   = "import java.util.Set;\nimport javax.annotation.processing.*;\nimport javax.lang.model.SourceVersion;\nimport javax.lang.model.element.*;\nimport javax.tools.Diagnostic;\n\n@SupportedAnnotationTypes(\"*\")\n@SupportedSourceVersion(SourceVersion.RELEASE_17)\npublic class Checker extends AbstractProcessor {\n    @Override\n    public boolean process(Set<? extends TypeElement> annotations, RoundEnvironment env) {\n        for (Element e : env.getRootElements()) {\n            if (e.getSimpleName().toString().startsWith(\"Bad\")) {\n                processingEnv.getMessager().printMessage(Diagnostic.Kind.ERROR, \"class names must not start with Bad\", e);\n            }\n        }\n        if (env.processingOver()) {\n            processingEnv.getMessager().printMessage(Diagnostic.Kind.ERROR, \"Checker found problems\");\n        }\n        return false;\n    }\n}\n"
	srcBadName     = "\npublic class BadName {\n}\n"
	mavenDeprecate = "          <configuration>\n            <showDeprecation>true</showDeprecation>\n            <compilerArgs><arg>-Xlint:deprecation</arg></compilerArgs>\n          </configuration>\n"
	mavenWerror    = "          <configuration>\n            <compilerArgs><arg>-Xlint:deprecation</arg><arg>-Werror</arg></compilerArgs>\n          </configuration>\n"
	mavenNoProc    = "          <configuration>\n            <annotationProcessors><annotationProcessor>com.Nope</annotationProcessor></annotationProcessors>\n          </configuration>\n"
)

const bMain = "b/src/main/java/B.java"

func corpusCases() []corpusCase {
	gradle := []string{"gradle", "--offline", "--no-daemon", "--console=plain"}
	mvn := []string{"mvn", "--offline", "--batch-mode", "-Dmaven.repo.local=" + filepath.Join(captureBase, "maven-repository")}
	gradleFiles := func(extra map[string]string) map[string]string {
		m := map[string]string{"settings.gradle": gradleTwoModules, "build.gradle": gradleBuild(""), "a/src/main/java/A.java": srcA}
		for k, v := range extra {
			m[k] = v
		}
		return m
	}
	mavenFiles := func(extra map[string]string) map[string]string {
		m := map[string]string{"pom.xml": mavenRoot(""), "a/pom.xml": mavenModule("a", ""), "b/pom.xml": mavenModule("b", ""), "a/src/main/java/A.java": srcA}
		for k, v := range extra {
			m[k] = v
		}
		return m
	}
	junit := "  <dependencies>\n    <dependency>\n      <groupId>junit</groupId>\n      <artifactId>junit</artifactId>\n      <version>4.99</version>\n    </dependency>\n  </dependencies>\n"
	return []corpusCase{
		{name: "javac-syntax", tool: "javac", files: map[string]string{"src/B.java": srcBSyntax},
			args: []string{"javac", "-d", "out", "src/B.java"}, exit: 1,
			wants: []want{{"error", "src/B.java", 3, "';' expected"}}},
		{name: "javac-missing-symbol", tool: "javac", files: map[string]string{"src/B.java": srcBMissing},
			args: []string{"javac", "-d", "out", "src/B.java"}, exit: 1,
			wants: []want{{"error", "src/B.java", 3, "cannot find symbol"}}},
		{name: "javac-annotation-processor", tool: "javac",
			files: map[string]string{"processor/Checker.java": srcProcessor, "src/BadName.java": srcBadName, "src/B.java": srcB},
			steps: [][]string{{"javac", "-d", "processor-classes", "processor/Checker.java"}},
			args:  []string{"javac", "-d", "out", "-processorpath", "processor-classes", "-processor", "Checker", "src/BadName.java", "src/B.java"}, exit: 1,
			wants: []want{{"error", "src/BadName.java", 2, "class names must not start with Bad"}, {"error", "", 0, "Checker found problems"}}},
		{name: "gradle-missing-symbol", tool: "gradle", files: gradleFiles(map[string]string{bMain: srcBMissing}),
			args: append(gradle, "classes"), exit: 1,
			wants: []want{{"error", bMain, 3, "cannot find symbol"}}},
		{name: "gradle-syntax", tool: "gradle", files: gradleFiles(map[string]string{bMain: srcBSyntax}),
			args: append(gradle, "classes"), exit: 1,
			wants: []want{{"error", bMain, 3, "';' expected"}}},
		{name: "gradle-type-mismatch", tool: "gradle", files: gradleFiles(map[string]string{bMain: srcBMismatch}),
			args: append(gradle, "classes"), exit: 1,
			wants: []want{{"error", bMain, 3, "incompatible types: int cannot be converted to String"}, {"error", bMain, 4, "incompatible types: String cannot be converted to int"}}},
		{name: "gradle-missing-dependency", tool: "gradle",
			files: gradleFiles(map[string]string{"b/build.gradle": "repositories { mavenCentral() }\ndependencies { compile 'junit:junit:4.99' }\n", bMain: srcB}),
			args:  append(gradle, "classes"), exit: 1,
			wants: []want{{"error", "", 0, "Could not resolve all files for configuration ':b:compileClasspath'"}}},
		{name: "gradle-test-compile", tool: "gradle", files: gradleFiles(map[string]string{bMain: srcB, "b/src/test/java/BTest.java": srcTestBroken}),
			args: append(gradle, "testClasses"), exit: 1,
			wants: []want{{"error", "b/src/test/java/BTest.java", 3, "cannot find symbol"}}},
		{name: "gradle-two-modules", tool: "gradle", files: gradleFiles(map[string]string{"a/src/main/java/A.java": srcAMissing, bMain: srcBMissing}),
			args: append(gradle, "--continue", "classes"), exit: 1,
			wants: []want{{"error", "a/src/main/java/A.java", 3, "cannot find symbol"}, {"error", bMain, 3, "cannot find symbol"}}},
		{name: "gradle-deprecation-warnings", tool: "gradle",
			files: gradleFiles(map[string]string{"build.gradle": gradleBuild("        options.compilerArgs << '-Xlint:deprecation'\n"), bMain: srcB, "b/src/main/java/Old.java": srcDeprecated, "b/src/main/java/Uses.java": srcUsesOld}),
			args:  append(gradle, "classes"), exit: 0,
			wants: []want{{"warning", "b/src/main/java/Uses.java", 3, "[deprecation] legacy() in Old has been deprecated"}, {"warning", "b/src/main/java/Uses.java", 3, "[deprecation] Date(int,int,int) in Date has been deprecated"}}},
		{name: "gradle-non-ascii", dirName: "prøjekt mit Grüßen", tool: "gradle", files: gradleFiles(map[string]string{"b/src/main/java/Grüße.java": srcNonASCII}),
			args: append(gradle, "classes"), exit: 1,
			wants: []want{{"error", "b/src/main/java/Grüße.java", 3, "cannot find symbol"}, {"error", "b/src/main/java/Grüße.java", 3, "straße"}}},
		{name: "maven-missing-symbol", tool: "maven", files: mavenFiles(map[string]string{bMain: srcBMissing}),
			args: append(mvn, "compile"), exit: 1,
			wants: []want{{"error", bMain, 3, "cannot find symbol"}}},
		{name: "maven-quiet-missing-symbol", tool: "maven", files: mavenFiles(map[string]string{bMain: srcBMissing}),
			args: append(mvn, "-q", "compile"), exit: 1,
			wants: []want{{"error", bMain, 3, "cannot find symbol"}}},
		{name: "maven-quiet-werror", tool: "maven",
			files: mavenFiles(map[string]string{"pom.xml": mavenRoot(mavenWerror), bMain: srcB, "b/src/main/java/Old.java": srcDeprecated, "b/src/main/java/Uses.java": srcUsesOld}),
			args:  append(mvn, "-q", "compile"), exit: 1,
			wants: []want{{"error", "b/src/main/java/Uses.java", 0, "warnings found and -Werror specified"}}},
		{name: "maven-quiet-missing-processor", tool: "maven", files: mavenFiles(map[string]string{"pom.xml": mavenRoot(mavenNoProc), bMain: srcB}),
			args: append(mvn, "-q", "compile"), exit: 1,
			wants: []want{{"error", "", 0, "Annotation processor 'com.Nope' not found"}}},
		{name: "maven-type-mismatch", tool: "maven", files: mavenFiles(map[string]string{bMain: srcBMismatch}),
			args: append(mvn, "compile"), exit: 1,
			wants: []want{{"error", bMain, 3, "incompatible types: int cannot be converted to java.lang.String"}, {"error", bMain, 4, "incompatible types: java.lang.String cannot be converted to int"}}},
		{name: "maven-missing-dependency", tool: "maven", files: mavenFiles(map[string]string{"b/pom.xml": mavenModule("b", junit), bMain: srcB}),
			args: append(mvn, "compile"), exit: 1,
			wants: []want{{"error", "", 0, "Could not resolve dependencies for project corpus:b:jar:1"}}},
		{name: "maven-test-compile", tool: "maven", files: mavenFiles(map[string]string{bMain: srcB, "b/src/test/java/BTest.java": srcTestBroken}),
			args: append(mvn, "test-compile"), exit: 1,
			wants: []want{{"error", "b/src/test/java/BTest.java", 3, "cannot find symbol"}}},
		{name: "maven-two-modules", tool: "maven", files: mavenFiles(map[string]string{"a/src/main/java/A.java": srcAMissing, bMain: srcBMissing}),
			args: append(mvn, "--fail-at-end", "compile"), exit: 1,
			wants: []want{{"error", "a/src/main/java/A.java", 3, "cannot find symbol"}, {"error", bMain, 3, "cannot find symbol"}}},
		{name: "maven-deprecation-warnings", tool: "maven",
			files: mavenFiles(map[string]string{"pom.xml": mavenRoot(mavenDeprecate), bMain: srcB, "b/src/main/java/Old.java": srcDeprecated, "b/src/main/java/Uses.java": srcUsesOld}),
			args:  append(mvn, "compile"), exit: 0,
			wants: []want{{"warning", "b/src/main/java/Uses.java", 3, "legacy() in Old has been deprecated"}}},
		{name: "maven-non-ascii", dirName: "prøjekt mit Grüßen", tool: "maven", files: mavenFiles(map[string]string{"b/src/main/java/Grüße.java": srcNonASCII}),
			args: append(mvn, "compile"), exit: 1,
			wants: []want{{"error", "b/src/main/java/Grüße.java", 3, "cannot find symbol"}, {"error", "b/src/main/java/Grüße.java", 3, "straße"}}},
	}
}

// TestCaptureCorpus runs each real case and rewrites its corpus entry; only
// with -capture.
func TestCaptureCorpus(t *testing.T) {
	if !*capture {
		t.Skip("re-captures the corpus only with -capture")
	}
	repo := filepath.Join(captureBase, "maven-repository")
	if _, err := os.Stat(repo); err != nil {
		if err := os.MkdirAll(captureBase, 0o755); err != nil {
			t.Fatal(err)
		}
		if out, err := exec.Command("cp", "-rs", "/usr/share/maven-repo", repo).CombinedOutput(); err != nil {
			t.Fatalf("mirroring /usr/share/maven-repo: %v\n%s", err, out)
		}
	}
	versions := toolVersions(t)
	for _, c := range corpusCases() {
		t.Run(c.name, func(t *testing.T) {
			name := c.dirName
			if name == "" {
				name = c.name + " project"
			}
			dir := filepath.Join(captureBase, c.name, name)
			if err := os.RemoveAll(filepath.Dir(dir)); err != nil {
				t.Fatal(err)
			}
			for rel, content := range c.files {
				p := filepath.Join(dir, rel)
				if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			for _, step := range c.steps {
				if out, err := run(dir, step); err != nil {
					t.Fatalf("%v: %v\n%s", step, err, out)
				}
			}
			out, err := run(dir, c.args)
			code := 0
			var exit *exec.ExitError
			switch {
			case errors.As(err, &exit):
				code = exit.ExitCode()
			case err != nil:
				t.Fatalf("%v: %v", c.args, err)
			}
			if code != c.exit {
				t.Fatalf("%v exited %d, want %d:\n%s", c.args, code, c.exit, out)
			}
			var wants strings.Builder
			for _, w := range c.wants {
				wants.WriteString(w.String() + "\n")
			}
			ar := &txtar.Archive{
				Comment: []byte(fmt.Sprintf("source: captured on this machine (%s)\ndir: %s\ncommand: %s\nexit: %d\n",
					versions[c.tool], dir, strings.Join(c.args, " "), code)),
				Files: []txtar.File{{Name: "output", Data: out}, {Name: "want", Data: []byte(wants.String())}},
			}
			path := filepath.Join("testdata", "corpus", c.name+".txtar")
			if old, err := txtar.ParseFile(path); err == nil {
				for _, f := range old.Files {
					if f.Name == "summary" {
						ar.Files = append(ar.Files, f)
					}
				}
			}
			if err := os.WriteFile(path, txtar.Format(ar), 0o644); err != nil {
				t.Fatal(err)
			}
		})
	}
}

// run runs argv in dir with a bounded time and returns stdout and stderr
// together, as a safe build's log has them.
func run(dir string, argv []string) ([]byte, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	cmd.Dir = dir
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	return out.Bytes(), err
}

// toolVersions names the versions the corpus was captured with.
func toolVersions(t *testing.T) map[string]string {
	first := func(argv ...string) string {
		out, err := exec.Command(argv[0], argv[1:]...).CombinedOutput()
		if err != nil {
			t.Fatalf("%v: %v\n%s", argv, err, out)
		}
		for _, l := range strings.Split(string(out), "\n") {
			l = strings.TrimSpace(stripANSIString(l))
			if l != "" && !strings.HasPrefix(l, "---") && !strings.HasPrefix(l, "openjdk") && !strings.HasPrefix(l, "OpenJDK") {
				return l
			}
		}
		return ""
	}
	javac := first("javac", "-version")
	return map[string]string{
		"javac":  javac,
		"gradle": first("gradle", "--version") + ", " + javac + ", --offline",
		"maven":  first("mvn", "--version") + ", " + javac + ", --offline with /usr/share/maven-repo",
	}
}

func stripANSIString(s string) string { return string(stripANSI([]byte(s))) }
