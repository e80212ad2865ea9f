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

// startWatchdog makes the channel at once and runs the watchdog in the
// background, off the build's path: what the supervisor writes before the
// watchdog runs waits in the channel. The channel is a pair of connected
// Unix sockets, so that a message can carry a file (CloseAway); the
// watchdog reads its end as a pipe. It returns the supervisor's end, nil
// when there is no channel.
func startWatchdog(log interface{ Warn(string, ...any) }) *os.File {
	r, w, err := channel()
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

// channel returns the watchdog's end of its channel and the supervisor's,
// both close-on-exec; the supervisor's is non-blocking, for its writes'
// deadline.
func channel() (watchdogEnd, supervisorEnd *os.File, err error) {
	fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return nil, nil, os.NewSyscallError("socketpair", err)
	}
	if err := unix.SetNonblock(fds[1], true); err != nil {
		unix.Close(fds[0])
		unix.Close(fds[1])
		return nil, nil, os.NewSyscallError("setnonblock", err)
	}
	return os.NewFile(uintptr(fds[0]), "watchdog"), os.NewFile(uintptr(fds[1]), "watchdog"), nil
}

// closeAway sends f to the watchdog on a message of its own ("close"),
// which the watchdog skips: the kernel releases a file that comes with a
// message read without room for it in the reader's process, so f's last
// close, with whatever it waits for, happens there. It reports whether f
// was sent; it does not close f.
func (d *Watchdog) closeAway(f *os.File) bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.w == nil {
		return false
	}
	fc, err := f.SyscallConn()
	if err != nil {
		return false
	}
	wc, err := d.w.SyscallConn()
	if err != nil {
		return false
	}
	_ = d.w.SetWriteDeadline(time.Now().Add(watchdogWriteWait))
	var werr, serr error
	err = fc.Control(func(fd uintptr) {
		werr = wc.Write(func(w uintptr) bool {
			serr = unix.Sendmsg(int(w), []byte("\nclose\n"), unix.UnixRights(int(fd)), nil, 0)
			return serr != unix.EAGAIN
		})
	})
	return err == nil && werr == nil && serr == nil
}

// WatchdogMain is the watchdog (WatchdogArg): it reads the supervisor's
// messages from in until the channel ends, then ends the builds still
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
