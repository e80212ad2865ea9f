//go:build !linux

package safebuild

import (
	"context"
	"time"
)

// watch is the kernel's report of the build's changes, which the search
// asks only of Linux (watch_linux.go): here it compares two scans.
type watch struct{ start time.Time }

// startWatch is nil: the search scans.
func startWatch(context.Context, []watchedDir) *watch { return nil }

func (*watch) close() {}

func (*watch) replacedRoots() []string { return nil }

func (*watch) besides(context.Context, map[string]bool) []changedFile { return nil }

func (*watch) changes(context.Context, []watchedDir) ([]changedFile, []string, string) {
	return nil, nil, "the kernel's report of changes is not asked on this system"
}
