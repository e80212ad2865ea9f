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
// a writer that is not a file asks for copying through pipes. A terminal on
// stdin is not handed over (a child in a background process group that reads
// it would be stopped by SIGTTIN); the child reads /dev/null instead.
type ExecRunner struct {
	c     Command
	group // Signal and Kill of the Runner
	tw    *transcriptWriter
	pumps sync.WaitGroup
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
	cmd := exec.Command(r.c.Argv[0], r.c.Argv[1:]...)
	cmd.Dir, cmd.Env = r.c.Dir, r.c.Env
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	dieWithParent(cmd.SysProcAttr)

	stdin, err := r.input()
	if err != nil {
		r.closeEnds()
		return err
	}
	if stdin != nil { // nil: exec opens /dev/null
		cmd.Stdin = stdin
	}
	if cmd.Stdout, err = r.output(r.c.Stdout); err != nil {
		r.closeEnds()
		return err
	}
	if cmd.Stderr, err = r.output(r.c.Stderr); err != nil {
		r.closeEnds()
		return err
	}
	if err := cmd.Start(); err != nil {
		r.closeEnds()
		return fmt.Errorf("%w: %w", ErrCannotRun, err)
	}
	r.group.started(cmd)
	for _, f := range r.childEnds {
		f.Close()
	}
	r.childEnds = nil
	r.c.Logger.Debug("build started", "pid", cmd.Process.Pid, "mode", "exec")
	return nil
}

// input returns the child's stdin: our file unless it is a terminal, or a
// pipe fed from a reader that is not a file.
func (r *ExecRunner) input() (*os.File, error) {
	if f, ok := r.c.Stdin.(*os.File); ok {
		if term.IsTerminal(int(f.Fd())) {
			return nil, nil // /dev/null
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
		defer cleanUpOnPanic(func() { _ = r.Kill() })
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
		defer cleanUpOnPanic(func() { _ = r.Kill() })
		pump(w, pr, r.c.Logger)
	}()
	return pw, nil
}

// Wait implements Runner.
func (r *ExecRunner) Wait() (int, error) {
	code, left, err := r.group.wait(r.c.Grace)
	if err != nil {
		return 0, err
	}
	done := make(chan struct{})
	go func() { r.pumps.Wait(); close(done) }()
	if !waitDone(done, r.c.DrainTimeout) {
		r.c.Logger.Warn("the build's output did not end after it exited; some of it may be lost", "timeout", r.c.DrainTimeout)
	}
	return code, stragglers(left)
}

// Resize implements Runner; without a terminal there is nothing to resize.
func (r *ExecRunner) Resize() error { return nil }

// Close implements Runner. It kills the child's group if it still runs.
func (r *ExecRunner) Close() error {
	r.closeOnce.Do(func() {
		_ = r.Kill()
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
