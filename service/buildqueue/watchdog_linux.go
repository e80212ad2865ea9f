package buildqueue

import (
	"io"
	"os"
	"os/exec"
	"strconv"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// startWatchdog makes the pipe at once and runs the watchdog in the
// background, off the build's path: what the supervisor writes before the
// watchdog runs waits in the pipe. It returns the pipe's write end, nil
// when there is no pipe.
func startWatchdog(log interface{ Warn(string, ...any) }) *os.File {
	r, w, err := os.Pipe() // both ends close-on-exec
	if err != nil {
		log.Warn("the watchdog cannot start; a build's processes outlive a killed supervisor until the next build", "error", err)
		return nil
	}
	go func() {
		defer r.Close() // the watchdog's copy is the only read end left
		cmd := &exec.Cmd{
			// This binary, even once replaced or removed on disk.
			Path:  "/proc/self/exe",
			Args:  []string{os.Args[0], WatchdogArg, strconv.Itoa(os.Getpid())},
			Stdin: r,
			Dir:   "/",
			// Its own session: no signal of the terminal or of a build's
			// group reaches it, and no build counts it as one of its
			// processes (docs/decisions.md#D12).
			SysProcAttr: &syscall.SysProcAttr{Setsid: true},
		}
		if err := cmd.Start(); err != nil {
			log.Warn("the watchdog cannot start; a build's processes outlive a killed supervisor until the next build", "error", err)
			return // the write end's messages fail: no reader
		}
		go func() { _ = cmd.Wait() }() // collected when it exits
	}()
	return w
}

// WatchdogMain is the watchdog (WatchdogArg): it reads the supervisor's
// messages from in until the pipe ends, then ends the builds still
// running, each after its own grace. It returns the process's exit code:
// 1 when processes outlived SIGKILL (left to the next build, endOutlived).
func WatchdogMain(in io.Reader) int {
	builds := readWatched(in)
	start, last := time.Now(), time.Duration(0)
	for _, b := range builds {
		for _, p := range liveOf([]group{b.g}) {
			signalProcess(p, unix.SIGTERM)
		}
		last = max(last, b.grace)
	}
	for end := start.Add(last + killWait); len(builds) > 0; time.Sleep(outlivedPoll) {
		for pgid, b := range builds {
			live := liveOf([]group{b.g})
			if len(live) == 0 {
				delete(builds, pgid)
				continue
			}
			if time.Since(start) >= b.grace {
				// What runs after the grace, and what it started meanwhile.
				for _, p := range live {
					signalProcess(p, unix.SIGKILL)
				}
			}
		}
		if len(builds) > 0 && !time.Now().Before(end) {
			return 1
		}
	}
	return 0
}
