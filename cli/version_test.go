package cli

import (
	"runtime/debug"
	"strings"
	"testing"
)

// TestVersionFrom: a linked version wins (release builds); without one the
// binary reports what Go embedded: the module's version, else the VCS
// revision and whether the tree was modified; "dev" only when nothing is
// known.
func TestVersionFrom(t *testing.T) {
	t.Parallel()
	rev := "337938493b14b6b899e2b9e75c1bb4bec1225baf"
	vcs := func(modified string) []debug.BuildSetting {
		return []debug.BuildSetting{{Key: "vcs", Value: "git"}, {Key: "vcs.revision", Value: rev}, {Key: "vcs.modified", Value: modified}}
	}
	for _, c := range []struct {
		name   string
		linked string
		bi     *debug.BuildInfo
		ok     bool
		want   string
	}{
		{"linked", "v1.2.3", &debug.BuildInfo{Main: debug.Module{Version: "v0.0.0-20261202063226-337938493b14"}, Settings: vcs("true")}, true, "v1.2.3"},
		{"linked, no build info", "v1.2.3", nil, false, "v1.2.3"},
		{"module version", "dev", &debug.BuildInfo{Main: debug.Module{Version: "v0.4.0"}}, true, "v0.4.0"},
		{"pseudo-version of a modified checkout", "dev", &debug.BuildInfo{Main: debug.Module{Version: "v0.0.0-20261202063226-337938493b14+dirty"}, Settings: vcs("true")}, true, "v0.0.0-20261202063226-337938493b14+dirty"},
		{"revision, modified", "dev", &debug.BuildInfo{Main: debug.Module{Version: "(devel)"}, Settings: vcs("true")}, true, "dev-" + rev + "+dirty"},
		{"revision, clean", "dev", &debug.BuildInfo{Main: debug.Module{Version: "(devel)"}, Settings: vcs("false")}, true, "dev-" + rev},
		{"nothing known", "dev", &debug.BuildInfo{Main: debug.Module{Version: "(devel)"}}, true, "dev"},
		{"no build info", "dev", nil, false, "dev"},
	} {
		if got := versionFrom(c.linked, c.bi, c.ok); got != c.want {
			t.Errorf("%s: versionFrom = %q, want %q", c.name, got, c.want)
		}
	}
}

// TestVersionCommandPrintsTheEmbeddedVersion: `buildguard version` prints
// what versionFrom finds in this binary.
func TestVersionCommandPrintsTheEmbeddedVersion(t *testing.T) {
	t.Parallel()
	bi, ok := debug.ReadBuildInfo()
	want := versionFrom(Version, bi, ok)
	for _, args := range [][]string{{"version"}, {"--version"}} {
		var stdout, stderr strings.Builder
		if code := run(args, &stdout, &stderr); code != ExitOK || stdout.String() != want+"\n" || stderr.Len() != 0 {
			t.Errorf("%v: code %d, stdout %q, stderr %q; want %q", args, code, stdout.String(), stderr.String(), want)
		}
	}
}
