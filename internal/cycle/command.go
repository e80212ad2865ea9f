package cycle

import (
	"errors"
	"fmt"
	"strings"
)

// The reasons Check gives for a command that cannot run as a guarded
// continuous build. Each is a usage error: nothing has run.
var (
	// ErrNotGradle means the command is not Gradle: only Gradle has cycles
	// that an init script can report.
	ErrNotGradle = errors.New("only a Gradle command can run as a continuous guarded build")
	// ErrNotContinuous means the Gradle command is not in continuous mode.
	ErrNotContinuous = errors.New("the Gradle command is not continuous")
	// ErrConfigurationCache means the command asks for the configuration
	// cache, whose cache hits skip the init script that reports cycles.
	ErrConfigurationCache = errors.New("the configuration cache cannot be used in a continuous guarded build")
)

// gradleNames are the base names of the commands Check accepts as Gradle.
var gradleNames = []string{"gradle", "gradlew", "gradle.bat", "gradlew.bat"}

// Check returns nil when argv is a Gradle command in continuous mode that
// the cycle init script can guard, and otherwise an error wrapping one of
// ErrNotGradle, ErrNotContinuous or ErrConfigurationCache that says what to
// run instead.
func Check(argv []string) error {
	if len(argv) == 0 || !isGradle(argv[0]) {
		name := ""
		if len(argv) > 0 {
			name = argv[0]
		}
		return fmt.Errorf("%w (%q is not gradle or gradlew): run buildguard --continuous -- ./gradlew --continuous classes, or leave --continuous out to guard one finite build", ErrNotGradle, name)
	}
	continuous := false
	for _, a := range argv[1:] {
		switch {
		case a == "-t" || a == "--continuous":
			continuous = true
		case a == "--configuration-cache" || strings.HasPrefix(a, "--configuration-cache="):
			return fmt.Errorf("%w (%s): a cached cycle would skip the init script and run unguarded; leave it out", ErrConfigurationCache, a)
		}
	}
	if !continuous {
		return fmt.Errorf("%w: add --continuous (or -t) to the Gradle command, as in buildguard --continuous -- ./gradlew --continuous classes", ErrNotContinuous)
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

// ChannelProperty is the Gradle project property that names the channel
// file; the init script does nothing without it.
const ChannelProperty = "buildguard.cycleChannel"

// noConfigurationCache turns the configuration cache off for Gradle versions
// that have one; older ones only see an unused system property. It comes
// after the user's arguments, so it wins over an earlier -D of the same name.
const noConfigurationCache = "-Dorg.gradle.configuration-cache=false"
