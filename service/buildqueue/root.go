package buildqueue

import (
	"os"
	"path/filepath"
)

// The files that mark a project's root (docs/safe-build.md#4). configFile is
// the safe build's configuration (safebuild.ConfigFile).
const (
	configFile = ".buildguard.json"
	vcsDir     = ".git"
)

// gradleSettings are the files of a Gradle build's root directory.
var gradleSettings = []string{"settings.gradle", "settings.gradle.kts"}

// Root returns the root directory of the project that dir (absolute) is a
// directory of: every guarded build of the project shares the queue there,
// whatever directory of the project it was started in, so a wrapper in a
// module's directory waits behind a safe build of the whole project
// (docs/safe-build.md#4). It looks at dir and its ancestors, up to the
// first that holds .git, and never at the user's home directory or the
// file-system root unless dir is one of them:
//
//  1. the nearest that holds .buildguard.json;
//  2. else the highest that holds settings.gradle or settings.gradle.kts
//     (the root of a Gradle build, and of the builds it includes);
//  3. else the highest of the unbroken chain of directories holding pom.xml
//     that starts at dir (a Maven module and its aggregators);
//  4. else dir itself.
//
// Symlinks in dir are resolved first, so every spelling of a directory has
// one root.
func Root(dir string) string {
	if real, err := filepath.EvalSymlinks(dir); err == nil {
		dir = real
	}
	dir = filepath.Clean(dir)
	home := realHome()
	gradle, maven, chain := "", "", true
	for d := dir; ; {
		if isFile(d, configFile) {
			return d
		}
		for _, s := range gradleSettings {
			if isFile(d, s) {
				gradle = d
			}
		}
		if chain = chain && isFile(d, "pom.xml"); chain {
			maven = d
		}
		parent := filepath.Dir(d)
		if exists(d, vcsDir) || d == home || parent == home || filepath.Dir(parent) == parent {
			break
		}
		d = parent
	}
	switch {
	case gradle != "":
		return gradle
	case maven != "":
		return maven
	}
	return dir
}

// realHome is the user's home directory with its symlinks resolved; "" when
// there is none.
func realHome() string {
	home, err := os.UserHomeDir()
	if err != nil || home == "" {
		return ""
	}
	if real, err := filepath.EvalSymlinks(home); err == nil {
		home = real
	}
	return filepath.Clean(home)
}

// isFile reports whether dir/name is a file (a symlink to one counts: the
// build tools follow it).
func isFile(dir, name string) bool {
	fi, err := os.Stat(filepath.Join(dir, name))
	return err == nil && !fi.IsDir()
}

// exists reports whether anything stands at dir/name.
func exists(dir, name string) bool {
	_, err := os.Lstat(filepath.Join(dir, name))
	return err == nil
}
