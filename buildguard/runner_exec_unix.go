//go:build unix

package buildguard

import (
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"sync"
	"syscall"

	"golang.org/x/term"
)

// ExecRunner runs the child in its own process group with plain stdio: the
// wrapper's own descriptors are handed over unchanged unless a Transcript or
// a writer that is not a file asks for copying through pipes. The child
// inherits stdin, as under a shell, also a terminal (docs/decisions.md#D12).
// When that terminal is the wrapper's controlling terminal, the child's
// group is run like a shell job (see jobTerminal): it gets the terminal's
// foreground while it runs, Ctrl-Z suspends it with the wrapper's job, and
// the wrapper's group gets the terminal back on every path. A child that
// stops to read or change a terminal it cannot be given is killed, and Wait
// returns a *TerminalStopError, instead of being waited for forever.
// (Outside Linux a terminal on stdin is not handed over; the child reads
// /dev/null.)
type ExecRunner struct {
	c     Command
	group // Signal and Kill of the Runner
	tw    *transcriptWriter
	jt    *jobTerminal // nil unless stdin is our controlling terminal
	pumps sync.WaitGroup

	stopMu  sync.Mutex
	stopErr error // why a stop of the child ended the build
	// files the parent closes after Start (child ends of pipes) and after
	// Wait (parent ends).
	childEnds  []*os.File
	parentEnds []*os.File
	closeOnce  sync.Once
}

// NewExecRunner returns a Runner for c without a pseudo-terminal.
func NewExecRunner(c Command) *ExecRunner {
	c = c.withDefaults()
	return &ExecRunner{c: c, tw: &transcriptWriter{w: c.Transcript, log: c.Logger}}
}

// Start implements Runner.
func (r *ExecRunner) Start() error {
	if len(r.c.Argv) == 0 {
		return fmt.Errorf("%w: no command given", ErrCannotRun)
	}
	stdin, err := r.input()
	if err != nil {
		r.closeEnds()
		return err
	}
	r.group.onStop = r.onStop
	stdout, err := r.output(r.c.Stdout)
	if err != nil {
		r.closeEnds()
		return err
	}
	// One destination, one pipe: the child's two streams keep the order it
	// wrote them in, as on a terminal (a compiler's lines on stderr and the
	// build tool's on stdout read as one story).
	stderr := stdout
	if !sameWriter(r.c.Stdout, r.c.Stderr) {
		if stderr, err = r.output(r.c.Stderr); err != nil {
			r.closeEnds()
			return err
		}
	}
	build := func() *exec.Cmd {
		cmd := exec.Command(r.c.Argv[0], r.c.Argv[1:]...)
		cmd.Dir, cmd.Env = r.c.Dir, r.c.Env
		cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
		dieWithParent(cmd.SysProcAttr)
		if stdin != nil { // nil: exec opens /dev/null
			cmd.Stdin = stdin
		}
		if r.jt != nil {
			r.jt.prepare(cmd.SysProcAttr)
		}
		cmd.Stdout, cmd.Stderr = stdout, stderr
		return cmd
	}
	cmd, err := startHeld(r.c.Started != nil, build, (*exec.Cmd).Start, func(cmd *exec.Cmd) {
		r.jt.started(cmd.Process.Pid, false)
		r.group.started(cmd)
		r.c.started(cmd.Process.Pid, false)
	}, r.c.Logger)
	if err != nil {
		r.jt.started(0, true)
		r.closeEnds()
		return fmt.Errorf("%w: %w", ErrCannotRun, err)
	}
	for _, f := range r.childEnds {
		f.Close()
	}
	r.childEnds = nil
	r.c.Logger.Debug("build started", "pid", cmd.Process.Pid, "mode", "exec")
	return nil
}

// input returns the child's stdin: our file, or a pipe fed from a reader
// that is not a file. A terminal that is our controlling terminal becomes
// the job terminal.
func (r *ExecRunner) input() (*os.File, error) {
	if f, ok := r.c.Stdin.(*os.File); ok {
		if term.IsTerminal(int(f.Fd())) {
			if !inheritsTerminal {
				return nil, nil // /dev/null
			}
			r.jt = newJobTerminal(f, r.c.Logger)
		}
		return f, nil
	}
	pr, pw, err := os.Pipe()
	if err != nil {
		return nil, fmt.Errorf("%w: creating the input pipe: %w", ErrCannotRun, err)
	}
	r.childEnds = append(r.childEnds, pr)
	r.parentEnds = append(r.parentEnds, pw)
	src := r.c.Stdin
	go func() {
		defer cleanUpOnPanic(r.abandon)
		// Ends at EOF of src, or when the child no longer reads (EPIPE) or
		// Close closed pw.
		_, _ = io.Copy(pw, src)
		pw.Close()
	}()
	return pr, nil
}

// output returns what the child writes one stream to: dst itself when it is
// a file and no transcript is kept, else a pipe copied to dst and the
// transcript.
func (r *ExecRunner) output(dst io.Writer) (*os.File, error) {
	if f, ok := dst.(*os.File); ok && r.c.Transcript == nil {
		return f, nil
	}
	pr, pw, err := os.Pipe()
	if err != nil {
		return nil, fmt.Errorf("%w: creating the output pipe: %w", ErrCannotRun, err)
	}
	r.childEnds = append(r.childEnds, pw)
	r.parentEnds = append(r.parentEnds, pr)
	var w io.Writer = dst
	if r.c.Transcript != nil {
		w = teeWriter{dst: dst, t: r.tw}
	}
	r.pumps.Add(1)
	go func() {
		defer r.pumps.Done()
		defer cleanUpOnPanic(r.abandon)
		pump(w, pr, r.c.Logger)
	}()
	return pw, nil
}

// Wait implements Runner.
func (r *ExecRunner) Wait() (int, error) {
	code, left, err := r.group.wait(r.c.Grace)
	r.jt.restore()
	if err != nil {
		return 0, err
	}
	done := make(chan struct{})
	go func() { r.pumps.Wait(); close(done) }()
	if !waitDone(done, r.c.DrainTimeout) {
		r.c.Logger.Warn("the build's output did not end after it exited; some of it may be lost", "timeout", r.c.DrainTimeout)
	}
	r.stopMu.Lock()
	serr := r.stopErr
	r.stopMu.Unlock()
	if serr != nil {
		return code, serr
	}
	return code, stragglers(left)
}

// onStop handles a stop of the child (see ExecRunner): through the job
// terminal when there is one; without one, a child stopped for the
// terminal is killed; other stops (someone's SIGSTOP) are waited out.
func (r *ExecRunner) onStop(sig syscall.Signal) {
	var err error
	switch {
	case r.jt != nil:
		err = r.jt.stopped(sig, &r.group)
	case sig == syscall.SIGTTIN || sig == syscall.SIGTTOU:
		err = &TerminalStopError{Signal: sig}
	}
	var tse *TerminalStopError
	if !errors.As(err, &tse) {
		if err != nil {
			r.c.Logger.Debug("continuing the build after its stop", "error", err)
		}
		return
	}
	r.stopMu.Lock()
	r.stopErr = err
	r.stopMu.Unlock()
	r.c.Logger.Warn("the build waits for a terminal it cannot be given; killing it", "signal", sig)
	_ = r.Kill()
}

// abandon gives the terminal back and kills the child's group, for a panic
// in one of the goroutines that copy to and from the child.
func (r *ExecRunner) abandon() {
	r.jt.restore()
	_ = r.Kill()
}

// Resize implements Runner; without a terminal there is nothing to resize.
func (r *ExecRunner) Resize() error { return nil }

// Close implements Runner. It kills the child's group if it still runs.
func (r *ExecRunner) Close() error {
	r.closeOnce.Do(func() {
		_ = r.Kill()
		r.jt.restore()
		r.closeEnds()
	})
	return nil
}

func (r *ExecRunner) closeEnds() {
	var errs []error
	for _, f := range append(r.childEnds, r.parentEnds...) {
		if err := f.Close(); err != nil && !errors.Is(err, os.ErrClosed) {
			errs = append(errs, err)
		}
	}
	r.childEnds, r.parentEnds = nil, nil
	if len(errs) > 0 {
		r.c.Logger.Debug("closing the build's pipes", "error", errors.Join(errs...))
	}
}

// sameWriter reports whether a and b are the same writer, as os/exec
// decides when it gives a child one pipe for both streams; writers of types
// that cannot be compared are never the same.
func sameWriter(a, b io.Writer) (same bool) {
	defer func() {
		if recover() != nil {
			same = false
		}
	}()
	return a == b
}
