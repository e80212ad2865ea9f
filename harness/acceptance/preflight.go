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
)

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
	install := "apt-get update && apt-get install -y " + strings.Join(pkgs, " ")
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
	}
	return miss
}

// packagesFor lists the packages to install: the ones the missing items
// need, plus the Maven plugin set whenever Gradle or a Maven plugin is
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
		if m.pkg == pkgGradle || m.pkg == pkgCompiler || m.pkg == pkgResources {
			for _, p := range []string{pkgGradle, pkgCompiler, pkgResources, pkgJar} {
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
