package cycle

import (
	"errors"
	"fmt"
	"slices"
	"strings"
)

// The reasons Check and Finite give for a command that cannot run as it
// is. Each is a usage error: nothing has run.
var (
	// ErrNotGradle means the command is not Gradle: only Gradle has cycles
	// that an init script can report.
	ErrNotGradle = errors.New("only a Gradle command can run as a continuous guarded build")
	// ErrNotContinuous means the Gradle command is not in continuous mode.
	ErrNotContinuous = errors.New("the Gradle command is not continuous")
	// ErrConfigurationCache means the command asks for the configuration
	// cache, whose cache hits skip the init script that reports cycles.
	ErrConfigurationCache = errors.New("the configuration cache cannot be used in a continuous guarded build")
	// ErrContinuous means a Gradle command in continuous mode was given to
	// the guard of one build, which would hold every cycle's output until
	// Gradle exits. A *ContinuousError carries the flag.
	ErrContinuous = errors.New("the Gradle command is continuous")
)

// ContinuousError is Finite's refusal: the Gradle command runs in
// continuous mode, through Flag, the argument as it was given (-t, -qt,
// --continuous, -continuous...).
type ContinuousError struct {
	Flag string
}

func (e *ContinuousError) Error() string {
	return fmt.Sprintf("%v (%s)", ErrContinuous, e.Flag)
}

func (e *ContinuousError) Unwrap() error { return ErrContinuous }

// gradleNames are the base names of the commands Check accepts as Gradle.
var gradleNames = []string{"gradle", "gradlew", "gradle.bat", "gradlew.bat"}

// Check returns nil when argv is a Gradle command in continuous mode that
// the cycle init script can guard, and otherwise an error wrapping one of
// ErrNotGradle, ErrNotContinuous or ErrConfigurationCache that says what to
// run instead. It reads the arguments as Gradle's command-line parser does
// (see parseGradle).
func Check(argv []string) error {
	if len(argv) == 0 || !isGradle(argv[0]) {
		name := ""
		if len(argv) > 0 {
			name = argv[0]
		}
		return fmt.Errorf("%w (%q is not gradle or gradlew): run buildguard --continuous -- ./gradlew --continuous classes, or leave --continuous out to guard one finite build", ErrNotGradle, name)
	}
	p := parseGradle(argv[1:])
	if p.cache != "" {
		return fmt.Errorf("%w (%s): a cached cycle would skip the init script and run unguarded; leave it out", ErrConfigurationCache, p.cache)
	}
	if p.continuous == "" {
		return fmt.Errorf("%w: add --continuous (or -t) to the Gradle command, as in buildguard --continuous -- ./gradlew --continuous classes", ErrNotContinuous)
	}
	return nil
}

// Finite returns nil unless argv is a Gradle command in continuous mode, in
// whatever spelling Gradle accepts; then a *ContinuousError naming the flag.
// Such a command never ends on its own: only the cycle guard (Check, the
// wrapper's --continuous) can guard it.
func Finite(argv []string) error {
	if len(argv) == 0 || !isGradle(argv[0]) {
		return nil
	}
	if flag := parseGradle(argv[1:]).continuous; flag != "" {
		return &ContinuousError{Flag: flag}
	}
	return nil
}

// isGradle reports whether the command's base name is a Gradle launcher.
func isGradle(cmd string) bool {
	base := cmd[strings.LastIndexAny(cmd, `/\`)+1:]
	for _, n := range gradleNames {
		if strings.EqualFold(base, n) {
			return true
		}
	}
	return false
}

// gradleLine is what parseGradle found in a Gradle command's arguments.
type gradleLine struct {
	continuous string // the first argument that turns continuous mode on; "" none
	cache      string // the first argument that asks for the configuration cache; "" none
	end        int    // the index of the "--" that ends the options; len(args) when none
}

// flagShort are Gradle's one-letter options that take no value (Gradle 4.4
// to 9), the ones that combine: "-qt" is -q -t. Any other letter takes a
// value ("-xtest" excludes the task "test") or is unknown to Gradle, which
// then fails at once.
const flagShort = "?hadimqsStuvw"

// longNames are Gradle's option names (Gradle 4.4 to 9) that its parser
// also accepts after a single dash ("-stacktrace", "-continuous").
var longNames = []string{
	"build-cache", "build-file", "configuration-cache", "configuration-cache-problems",
	"configure-on-demand", "console", "continue", "continuous", "daemon", "debug",
	"dependency-verification", "dry-run", "exclude-task", "export-keys", "foreground",
	"full-stacktrace", "gradle-user-home", "help", "include-build", "info", "init-script",
	"max-workers", "no-build-cache", "no-configuration-cache", "no-configure-on-demand",
	"no-continue", "no-daemon", "no-parallel", "no-problems-report", "no-rebuild", "no-scan",
	"no-search-upward", "no-watch-fs", "offline", "parallel", "priority", "problems-report",
	"profile", "project-cache-dir", "project-dir", "project-prop", "property-upgrade-report",
	"quiet", "recompile-scripts", "refresh-dependencies", "refresh-keys", "rerun-tasks",
	"scan", "settings-file", "stacktrace", "status", "stop", "system-prop", "task-graph",
	"update-locks", "version", "warn", "warning-mode", "watch-fs", "write-locks",
	"write-verification-metadata",
}

// parseGradle reads Gradle's arguments as Gradle's command-line parser
// (org.gradle.cli.CommandLineParser, Gradle 4.4.1 run to check) does:
//   - "--" ends the options; what follows goes to the tasks;
//   - every other argument that starts with "-" is an option, never the
//     value of the option before it (Gradle then says the value is
//     missing);
//   - "--name" and "--name=value" are the option name;
//   - "-X=value" is the one-letter option X with a value;
//   - "-word" is the option word when Gradle has one of that name
//     ("-continuous", "-stacktrace"); else its first letter is an option,
//     whose value is the rest when it takes one ("-xtest", "-Dk=v"), and
//     otherwise every further letter is an option too ("-qt", "-tq"; one
//     that is not, or that takes a value, is an error of Gradle's own).
//
// Continuous mode is "-t" or "--continuous" in any of these spellings;
// "--continuous=..." and "-t=..." are errors of Gradle's own.
func parseGradle(args []string) gradleLine {
	p := gradleLine{end: len(args)}
	note := func(dst *string, arg string) {
		if *dst == "" {
			*dst = arg
		}
	}
	for i, a := range args {
		if a == "--" {
			p.end = i
			break
		}
		switch name, _, valued := strings.Cut(strings.TrimPrefix(a, "-"), "="); {
		case len(a) < 2 || a[0] != '-':
		case a[1] == '-':
			name, _, valued = strings.Cut(a[2:], "=")
			if name == "continuous" && !valued {
				note(&p.continuous, a)
			}
			if name == "configuration-cache" {
				note(&p.cache, a)
			}
		case len(name) == 1 && valued:
		case slices.Contains(longNames, a[1:]) || a[1:] == "t":
			switch a[1:] {
			case "continuous", "t":
				note(&p.continuous, a)
			case "configuration-cache":
				note(&p.cache, a)
			}
		case strings.Trim(a[1:], flagShort) == "" && strings.IndexByte(a[1:], 't') >= 0:
			note(&p.continuous, a)
		}
	}
	return p
}

// ChannelProperty is the Gradle project property that names the channel
// file; the init script does nothing without it.
const ChannelProperty = "buildguard.cycleChannel"

// noConfigurationCache turns the configuration cache off for Gradle versions
// that have one; older ones only see an unused system property. It comes
// after the user's options, so it wins over an earlier -D of the same name.
const noConfigurationCache = "-Dorg.gradle.configuration-cache=false"
