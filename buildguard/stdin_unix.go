//go:build unix

package buildguard

import (
	"errors"
	"io"
	"os"
	"time"

	"github.com/hashicorp/go-hclog"
	"golang.org/x/sys/unix"
)

// eof is the terminal's end-of-file character (VEOF, Ctrl-D), sent to the
// child's terminal when the wrapper's input ends, so that a child reading its
// terminal sees the end of input as it would have through a pipe.
var eof = []byte{4}

// stdinCopier copies the wrapper's input to the child's terminal until the
// input ends or stop is called. For a file it waits with poll(2) on the file
// and on a wake-up pipe, so that stopping it never leaves a goroutine stuck
// in a read of the user's terminal (which would eat the next keystroke).
type stdinCopier struct {
	wakeR, wakeW *os.File
	done         chan struct{}
}

// backgroundWait is how long the input copy waits before it looks again
// whether it may read, while it may not.
const backgroundWait = 200 * time.Millisecond

// inputCopy says how a stdinCopier treats the input.
type inputCopy struct {
	// keys are bytes that are not copied: their function is called instead
	// (the raw terminal's Ctrl-C and Ctrl-Z).
	keys map[byte]func()
	// mayRead, when not nil, says whether the input may be read now: a
	// terminal must not be read from the background, which would stop the
	// wrapper (SIGTTIN).
	mayRead func() bool
	// onPanic runs if the copy panics (see cleanUpOnPanic).
	onPanic func()
	log     hclog.Logger
}

func startStdinCopier(src io.Reader, dst io.Writer, o inputCopy) *stdinCopier {
	onPanic, log := o.onPanic, o.log
	c := &stdinCopier{done: make(chan struct{})}
	f, ok := src.(*os.File)
	if !ok {
		go func() {
			defer close(c.done)
			defer cleanUpOnPanic(onPanic)
			if _, err := io.Copy(dst, src); err == nil {
				_, _ = dst.Write(eof)
			}
		}()
		return c
	}
	wr, ww, err := os.Pipe()
	if err != nil {
		log.Warn("cannot copy input to the build", "error", err)
		close(c.done)
		return c
	}
	c.wakeR, c.wakeW = wr, ww
	fd := int(f.Fd())
	wfd := int(wr.Fd())
	go func() {
		defer close(c.done)
		defer cleanUpOnPanic(onPanic)
		buf := make([]byte, 4096)
		fds := []unix.PollFd{{Fd: int32(fd), Events: unix.POLLIN}, {Fd: int32(wfd), Events: unix.POLLIN}}
		for {
			fds[0].Revents, fds[1].Revents = 0, 0
			if _, err := unix.Poll(fds, -1); err != nil {
				if errors.Is(err, unix.EINTR) {
					continue
				}
				return
			}
			if fds[1].Revents != 0 {
				return
			}
			if fds[0].Revents == 0 {
				continue
			}
			if o.mayRead != nil && !o.mayRead() {
				// The input is someone else's for now: wait, waking for stop.
				fds[1].Revents = 0
				if _, err := unix.Poll(fds[1:], int(backgroundWait/time.Millisecond)); err == nil && fds[1].Revents != 0 {
					return
				}
				continue
			}
			n, err := unix.Read(fd, buf)
			if n > 0 {
				if werr := copyInput(dst, buf[:n], o.keys); werr != nil {
					return
				}
			}
			if n == 0 && err == nil {
				_, _ = dst.Write(eof)
				return
			}
			if err != nil && !errors.Is(err, unix.EINTR) && !errors.Is(err, unix.EAGAIN) {
				return
			}
		}
	}()
	return c
}

// stop ends the copy and waits for it when it polls a file; a copy from a
// reader that is not a file ends at its next read.
func (c *stdinCopier) stop() {
	if c == nil {
		return
	}
	if c.wakeW != nil {
		c.wakeW.Close()
		<-c.done
		c.wakeR.Close()
	}
}

// copyInput writes p to dst, except each byte that is a key of keys: its
// function is called instead, in the order of the input.
func copyInput(dst io.Writer, p []byte, keys map[byte]func()) error {
	start := 0
	for i, c := range p {
		fn, ok := keys[c]
		if !ok {
			continue
		}
		if i > start {
			if _, err := dst.Write(p[start:i]); err != nil {
				return err
			}
		}
		fn()
		start = i + 1
	}
	if start == len(p) {
		return nil
	}
	_, err := dst.Write(p[start:])
	return err
}
