//go:build !linux

package buildqueue

import (
	"io"
	"os"

	osproc "github.com/buildguard/buildguard/internal/proc"
)

// endProcess is not needed where no record is written (osproc.Lookup finds
// nothing without /proc): it signals nothing.
func endProcess(osproc.Process) bool { return false }

// startWatchdog starts nothing where no record is written: the watchdog
// could not tell a build's processes from later holders of their ids.
func startWatchdog(interface{ Warn(string, ...any) }) *os.File { return nil }

// closeAway sends nothing: there is no watchdog here.
func (*Watchdog) closeAway(*os.File) bool { return false }

// WatchdogMain exits at once where there is no watchdog.
func WatchdogMain(io.Reader) int { return 0 }
