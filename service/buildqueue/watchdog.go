package buildqueue

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"sync"
	"time"
)

// A build's processes end with its supervisor where Linux allows it
// (docs/safe-build.md#4). The kernel ends the command with the process
// that supervises it (Pdeathsig), not what the command started; the
// record of the build's processes (Started) lets the next build end those,
// but only once a next build comes. So a supervisor (`build run`,
// `buildguard mcp`: EnableWatchdog) starts one watchdog, in the background
// while its first build waits for its turn: this binary again, run with
// WatchdogArg, in a session of its own, holding nothing but its end of a
// channel whose other end only the supervisor holds (close-on-exec: no
// build inherits it). The supervisor tells it each build's process group
// (and session) once the build runs and again when the build has ended,
// and hands it files to close (CloseAway). When the channel ends — the supervisor is gone, however it went, or it
// stopped the watchdog — the watchdog sends SIGTERM to the processes of
// the builds still told running, waits their grace, ends what is left with
// SIGKILL and exits; with no build running it exits at once.

// WatchdogArg is the hidden first argument that makes the binary a
// watchdog (WatchdogMain); the second is the supervisor's pid, for ps.
const WatchdogArg = "__buildguard-watchdog"

// watchdogWriteWait bounds a message to the watchdog: a watchdog that
// stopped reading (SIGSTOP) never holds a build up longer.
const watchdogWriteWait = time.Second

// maxWatchdogLine bounds a message the watchdog reads.
const maxWatchdogLine = 256

// Watchdog is the supervisor's end of its watchdog.
type Watchdog struct {
	log  interface{ Warn(string, ...any) }
	once sync.Once

	mu      sync.Mutex
	w       *os.File // the supervisor's end of the channel; nil before the start and once stopped
	stopped bool
}

// watchdog is this process's watchdog, nil when it enabled none: one a
// process, as the channel it holds ends with the process.
var watchdog struct {
	mu sync.Mutex
	d  *Watchdog
}

func current() *Watchdog {
	watchdog.mu.Lock()
	defer watchdog.mu.Unlock()
	return watchdog.d
}

// EnableWatchdog makes this process a supervisor with a watchdog: the
// watchdog starts, in the background, when the process's first build
// starts waiting for its turn (a process that builds nothing starts
// none), and is told of the builds of this process's turns from then on.
// Where there is no watchdog (no /proc, or no way to run this binary
// again) nothing starts, and log is told why. A second call returns the
// first's Watchdog.
func EnableWatchdog(log interface{ Warn(string, ...any) }) *Watchdog {
	watchdog.mu.Lock()
	defer watchdog.mu.Unlock()
	if watchdog.d == nil {
		watchdog.d = &Watchdog{log: log}
	}
	return watchdog.d
}

// start starts the watchdog once.
func (d *Watchdog) start() {
	if d == nil {
		return
	}
	d.once.Do(func() {
		d.mu.Lock()
		defer d.mu.Unlock()
		if !d.stopped {
			d.w = startWatchdog(d.log)
		}
	})
}

// Stop tells the watchdog that this process supervises no more builds:
// it exits at once when no build runs, else after it has ended the
// builds still running. It is idempotent.
func (d *Watchdog) Stop() {
	if d == nil {
		return
	}
	d.mu.Lock()
	d.stopped = true
	if d.w != nil {
		d.w.Close()
		d.w = nil
	}
	d.mu.Unlock()
	watchdog.mu.Lock()
	if watchdog.d == d {
		watchdog.d = nil
	}
	watchdog.mu.Unlock()
}

// send writes one message to the watchdog; a watchdog that is gone or
// does not read within watchdogWriteWait is not told.
func (d *Watchdog) send(format string, a ...any) {
	if d == nil {
		return
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.w == nil {
		return
	}
	_ = d.w.SetWriteDeadline(time.Now().Add(watchdogWriteWait))
	// Each message starts a line of its own: one cut short by the
	// deadline spoils only itself, not the next one glued to it.
	_, _ = fmt.Fprintf(d.w, "\n"+format, a...)
}

// watch tells the watchdog that g runs, to be ended after grace when the
// supervisor dies.
func (d *Watchdog) watch(g group, grace time.Duration) {
	d.send("watch %d %d %d %d\n", g.PGID, g.SID, g.Start, int64(grace))
}

// unwatch tells the watchdog that the build of process group pgid has
// ended.
func (d *Watchdog) unwatch(pgid int) { d.send("done %d\n", pgid) }

// CloseAway closes f where its close cannot hold up this process: in its
// watchdog's process, when this process has one running, else here. An
// inotify instance's last close waits for the kernel's grace period
// (10-15 ms on the machine of docs/performance.md#5.4), and a process's
// exit waits for the last close of each file it holds.
func CloseAway(f *os.File) {
	if d := current(); d != nil {
		d.closeAway(f)
	}
	f.Close()
}

// watched is a build the watchdog ends when the channel ends.
type watched struct {
	g     group
	grace time.Duration
}

// readWatched reads the supervisor's messages until the channel ends and
// returns the builds still running then. A message it does not know is
// skipped.
func readWatched(in io.Reader) map[int]watched {
	builds := map[int]watched{}
	s := bufio.NewScanner(in)
	s.Buffer(make([]byte, maxWatchdogLine), maxWatchdogLine)
	for s.Scan() {
		var w watched
		var grace int64
		if n, _ := fmt.Sscanf(s.Text(), "watch %d %d %d %d", &w.g.PGID, &w.g.SID, &w.g.Start, &grace); n == 4 && w.g.PGID > 1 {
			w.grace = time.Duration(grace)
			builds[w.g.PGID] = w
			continue
		}
		var pgid int
		if n, _ := fmt.Sscanf(s.Text(), "done %d", &pgid); n == 1 {
			delete(builds, pgid)
		}
	}
	return builds
}
