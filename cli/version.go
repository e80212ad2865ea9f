package cli

import (
	"runtime/debug"
	"sync"
)

// Version is the binary's version, set at link time with
// -ldflags "-X github.com/buildguard/buildguard/cli.Version=v1.2.3"
// (release builds do). When it is not set, `buildguard version` and the MCP
// serverInfo print what Go embedded in the binary instead (see version).
var Version = "dev"

// unlinked is Version's value when nothing was linked in.
const unlinked = "dev"

// version is the version the binary reports: the linked Version; else the
// main module's version as Go embedded it (go install of a tagged module, or
// the pseudo-version go build derives from the checkout); else the VCS
// revision, with "+dirty" when the tree was modified; else "dev"
// (docs/decisions.md#D3).
var version = sync.OnceValue(func() string {
	bi, ok := debug.ReadBuildInfo()
	return versionFrom(Version, bi, ok)
})

func versionFrom(linked string, bi *debug.BuildInfo, ok bool) string {
	if linked != unlinked || !ok {
		return linked
	}
	if v := bi.Main.Version; v != "" && v != "(devel)" {
		return v
	}
	var rev string
	modified := false
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.modified":
			modified = s.Value == "true"
		}
	}
	if rev == "" {
		return unlinked
	}
	v := unlinked + "-" + rev
	if modified {
		v += "+dirty"
	}
	return v
}
