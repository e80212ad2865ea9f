//go:build unix

package acceptance

import (
	"os"
	"path/filepath"
	"strconv"
)

// gradleChildArgs is what the safe Gradle build runs as its child.
const gradleChildArgs = "--offline --console=plain :b:compileJava"

// tools are the resolved paths a lane's commands use.
type tools struct {
	gradle, maven, javac string
	buildguard           string
	initScript           string // integrations/gradle/buildguard.init.gradle
	mvnShim              string // integrations/bin/buildguard-mvn
	mavenRepo            string // <work>/maven-repository
}

// ordinaryBuild is the lane's plain build, with no wrapper involved.
func ordinaryBuild(p project, t tools) step {
	switch p.lane {
	case LaneMaven:
		return step{
			argv: []string{t.maven, "--offline", "--batch-mode", "-Dmaven.repo.local=" + t.mavenRepo, "compile"},
			dir:  p.root,
		}
	default:
		return step{
			argv: []string{t.gradle, "--offline", "--no-daemon", "--console=plain", ":b:compileJava"},
			dir:  p.root,
		}
	}
}

// safeBuild is the lane's build under buildguard against port with owner:
// Gradle through the init script's reclazzSafeBuild task, Maven through the
// buildguard-mvn shim.
func safeBuild(p project, t tools, port int, owner string) step {
	switch p.lane {
	case LaneMaven:
		env := []string{"BUILDGUARD=" + t.buildguard}
		if dir := filepath.Dir(t.maven); filepath.IsAbs(t.maven) {
			// The shim finds mvn on PATH; put the chosen one first.
			env = append(env, "PATH="+dir+string(os.PathListSeparator)+os.Getenv("PATH"))
		}
		return step{
			argv: []string{t.mvnShim, "--port", strconv.Itoa(port), "--owner", owner, "--",
				"--offline", "--batch-mode", "-Dmaven.repo.local=" + t.mavenRepo, "compile"},
			dir: p.root,
			env: env,
		}
	default:
		return step{
			argv: []string{t.gradle, "--offline", "--no-daemon", "--console=plain",
				"--init-script", t.initScript, "reclazzSafeBuild",
				"-Pbuildguard.port=" + strconv.Itoa(port),
				"-Pbuildguard.owner=" + owner,
				"-Pbuildguard.executable=" + t.buildguard,
				"-Pbuildguard.args=" + gradleChildArgs},
			dir: p.root,
		}
	}
}

// appCompile compiles App.java against both module outputs.
func appCompile(p project, t tools) step {
	cp := p.outA() + string(os.PathListSeparator) + p.outB()
	return step{
		argv: []string{t.javac, "-d", p.appClasses(), "-cp", cp, filepath.Join(p.appDir(), "App.java")},
		dir:  p.root,
	}
}
