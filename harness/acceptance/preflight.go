//go:build unix

package acceptance

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

// The Debian packages that provide each prerequisite.
const (
	pkgGradle    = "gradle"
	pkgMaven     = "maven"
	pkgJDK       = "openjdk-17-jdk-headless"
	pkgCompiler  = "libmaven-compiler-plugin-java"
	pkgResources = "libmaven-resources-plugin-java"
	pkgJar       = "libmaven-jar-plugin-java"
	pkgJUnit5    = "junit5"
)

// offlineBuildPackages is the install line of the offline Gradle and Maven
// builds (docs/build-safety.md#7): Debian's Maven plugins resolve their
// parent POMs, junit5's org.junit:junit-bom:debian among them, from the same
// offline repository, so a repository without junit5 cannot compile at all.
var offlineBuildPackages = []string{pkgGradle, pkgCompiler, pkgResources, pkgJar, pkgJUnit5}

// missing is one prerequisite that is not there and the package providing it.
type missing struct {
	what string
	pkg  string
}

// preflight checks Java 17+, javac, Gradle, Maven and the Maven plugins of
// the selected lanes. When something is missing and the machine can install
// it (root with apt-get, and NoInstall unset) it installs the packages,
// saying so on out, and checks again. A missing prerequisite is always an
// error naming the install command.
func preflight(ctx context.Context, c Config, out io.Writer) error {
	miss := checkPrerequisites(ctx, c)
	if len(miss) == 0 {
		return nil
	}
	pkgs := packagesFor(miss)
	install := installCommand(pkgs)
	if c.NoInstall || os.Geteuid() != 0 {
		return fmt.Errorf("%w: %s; install with: %s", ErrPrerequisite, describe(miss), install)
	}
	aptGet, err := exec.LookPath("apt-get")
	if err != nil {
		return fmt.Errorf("%w: %s; install with: %s", ErrPrerequisite, describe(miss), install)
	}
	fmt.Fprintf(out, "preflight: missing %s; installing with: %s\n", describe(miss), install)
	if o, err := output(ctx, aptGet, "update"); err != nil {
		return fmt.Errorf("%w: apt-get update failed: %v\n%s", ErrPrerequisite, err, tail(o, 20))
	}
	args := append([]string{aptGet, "install", "-y"}, pkgs...)
	if o, err := output(ctx, args...); err != nil {
		return fmt.Errorf("%w: %s failed: %v\n%s", ErrPrerequisite, quoteArgv(args), err, tail(o, 20))
	}
	if miss := checkPrerequisites(ctx, c); len(miss) > 0 {
		return fmt.Errorf("%w: still missing after installing: %s; install with: %s", ErrPrerequisite, describe(miss), install)
	}
	fmt.Fprintf(out, "preflight: installed %s\n", strings.Join(pkgs, " "))
	return nil
}

// installCommand is the command line a message names for pkgs.
func installCommand(pkgs []string) string {
	return "apt-get update && apt-get install -y " + strings.Join(pkgs, " ")
}

// checkPrerequisites lists what the selected lanes need and do not find.
func checkPrerequisites(ctx context.Context, c Config) []missing {
	var miss []missing
	if v, err := javaMajor(ctx, c.Java); err != nil {
		miss = append(miss, missing{"java (" + err.Error() + ")", pkgJDK})
	} else if v < 17 {
		miss = append(miss, missing{fmt.Sprintf("Java 17 or newer (%s is Java %d)", c.Java, v), pkgJDK})
	}
	if _, err := exec.LookPath(c.Javac); err != nil {
		miss = append(miss, missing{"javac", pkgJDK})
	}
	if c.has(LaneGradle) {
		if _, err := exec.LookPath(c.Gradle); err != nil {
			miss = append(miss, missing{"gradle", pkgGradle})
		}
	}
	if c.has(LaneMaven) {
		if _, err := exec.LookPath(c.Maven); err != nil {
			miss = append(miss, missing{"mvn", pkgMaven})
		}
		plugins := filepath.Join(c.MavenRepoSource, "org", "apache", "maven", "plugins")
		for _, p := range []struct{ artifact, version, pkg string }{
			{"maven-compiler-plugin", mavenCompilerVersion, pkgCompiler},
			{"maven-resources-plugin", mavenResourcesVersion, pkgResources},
		} {
			jar := filepath.Join(plugins, p.artifact, p.version, p.artifact+"-"+p.version+".jar")
			if _, err := os.Stat(jar); err != nil {
				miss = append(miss, missing{p.artifact + " " + p.version + " in " + c.MavenRepoSource, p.pkg})
			}
		}
		bom := filepath.Join(c.MavenRepoSource, "org", "junit", "junit-bom", "debian", "junit-bom-debian.pom")
		if _, err := os.Stat(bom); err != nil {
			miss = append(miss, missing{"org.junit:junit-bom:debian in " + c.MavenRepoSource, pkgJUnit5})
		}
	}
	return miss
}

// packagesFor lists the packages to install: the ones the missing items
// need, plus the whole offline build set whenever one of its packages is
// missing (the install line of the project's documentation).
func packagesFor(miss []missing) []string {
	seen := map[string]bool{}
	var pkgs []string
	add := func(p string) {
		if !seen[p] {
			seen[p] = true
			pkgs = append(pkgs, p)
		}
	}
	for _, m := range miss {
		add(m.pkg)
		if slices.Contains(offlineBuildPackages, m.pkg) {
			for _, p := range offlineBuildPackages {
				add(p)
			}
		}
	}
	return pkgs
}

// describe joins the missing items for a message.
func describe(miss []missing) string {
	s := make([]string, len(miss))
	for i, m := range miss {
		s[i] = m.what
	}
	return strings.Join(s, ", ")
}

// javaVersionRE finds the version in `java -version` output.
var javaVersionRE = regexp.MustCompile(`version "([0-9]+)(?:\.([0-9]+))?`)

// javaMajor returns the major version of the java executable.
func javaMajor(ctx context.Context, java string) (int, error) {
	if _, err := exec.LookPath(java); err != nil {
		return 0, fmt.Errorf("%s not found", java)
	}
	out, err := output(ctx, java, "-version")
	if err != nil {
		return 0, err
	}
	return parseJavaMajor(out)
}

// parseJavaMajor reads the major version from `java -version` text; "1.8"
// is Java 8.
func parseJavaMajor(text string) (int, error) {
	m := javaVersionRE.FindStringSubmatch(text)
	if m == nil {
		return 0, fmt.Errorf("no version in java -version output: %q", tail(text, 3))
	}
	major, _ := strconv.Atoi(m[1])
	if major == 1 && m[2] != "" {
		major, _ = strconv.Atoi(m[2])
	}
	return major, nil
}

// tail returns the last n lines of s.
func tail(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

// proveMavenRepository compiles, in dir, a two-module project of the
// scenarios' own POMs with one class in each module, offline against repo
// and the way every Maven scenario builds, before any scenario runs: a
// repository that cannot build at all fails here, with ErrPrerequisite,
// Maven's last lines and the install command, instead of as the first
// scenario's compile error.
func proveMavenRepository(ctx context.Context, mvn, repo, dir string) error {
	files := map[string]string{"pom.xml": mavenRootPOM()}
	for _, m := range []string{"a", "b"} {
		files[filepath.Join(m, "pom.xml")] = mavenModulePOM(m)
		files[filepath.Join(m, "src", "main", "java", "Probe"+strings.ToUpper(m)+".java")] = "public class Probe" + strings.ToUpper(m) + " {}\n"
	}
	for name, text := range files {
		path := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			return fmt.Errorf("creating the Maven probe: %w", err)
		}
		if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
			return fmt.Errorf("creating the Maven probe: %w", err)
		}
	}
	fix := "install with: " + installCommand(offlineBuildPackages)
	out, err := output(ctx, mvn, "--offline", "--batch-mode", "-Dmaven.repo.local="+repo, "-f", filepath.Join(dir, "pom.xml"), "compile")
	if err != nil {
		return fmt.Errorf("%w: the offline Maven repository cannot compile a two-class project (%v); %s\n%s", ErrPrerequisite, err, fix, tail(out, 20))
	}
	for _, class := range []string{filepath.Join("a", "target", "classes", "ProbeA.class"), filepath.Join("b", "target", "classes", "ProbeB.class")} {
		if _, err := os.Stat(filepath.Join(dir, class)); err != nil {
			return fmt.Errorf("%w: the offline Maven probe compiled no %s; %s\n%s", ErrPrerequisite, class, fix, tail(out, 20))
		}
	}
	return nil
}
