// Package floor holds the cheapest programs that do the jobs buildguard's
// start-up, wrapper and HTTP front do, built on the same stack at the
// versions go.mod pins: go tool mage bench builds them as buildguard is
// released (static, no cgo, trimmed) and measures buildguard against them in
// the same run (docs/performance.md#1). Each is a main package below this
// one (wrap and wrapsdk share the work of internal/wrapfloor); this package
// holds nothing else.
package floor
