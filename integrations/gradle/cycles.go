// Package gradle ships buildguard's Gradle init scripts inside the binary.
// The scripts themselves (beside this file) are the integration; this
// package only embeds the one the wrapper applies itself.
package gradle

import _ "embed"

// CyclesInitScript is buildguard-cycles.init.gradle, the init script that
// `buildguard --continuous` applies to a continuous Gradle build so that each
// cycle reports its start and result (docs/decisions.md#D20).
//
//go:embed buildguard-cycles.init.gradle
var CyclesInitScript []byte
