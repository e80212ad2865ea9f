package jvm

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"sync"
	"time"
)

// InstallJDK is the command that installs the JDK the JVM fixtures need. A
// missing java or javac names it; the cases that need a JVM are never
// skipped.
const InstallJDK = "apt-get install -y openjdk-17-jdk-headless"

// KillTimeout bounds the wait for a killed JVM to be reaped.
const KillTimeout = 10 * time.Second

// outputDrainTimeout bounds the wait for the JVM's output after it exited.
const outputDrainTimeout = 2 * time.Second

// ErrNotReaped means a killed JVM did not exit within KillTimeout.
var ErrNotReaped = errors.New("the JVM was not reaped after SIGKILL")

// Tool returns the path of a JDK tool (java, javac) on PATH, or an error
// that names InstallJDK.
func Tool(name string) (string, error) {
	p, err := exec.LookPath(name)
	if err != nil {
		return "", fmt.Errorf("%s not found on PATH: a JDK 17 is needed (%s)", name, InstallJDK)
	}
	return p, nil
}

// Config describes the JVM Start launches.
type Config struct {
	// Java is the java executable. Empty means java on PATH.
	Java string
	// Args are the JVM's arguments, e.g. the -javaagent flag, -cp and the
	// main class. Required.
	Args []string
	// Dir is the working directory. Empty means the current one.
	Dir string
	// LogFile, when set, receives everything the JVM prints (stdout and
	// stderr), created or truncated. Empty means no file.
	LogFile string
	// Stdin keeps a pipe to the JVM's standard input for WriteLine. Default
	// false: the JVM reads no input.
	Stdin bool
}

// Process is a JVM started by Start, in its own process group where the
// system has them: its output lines are kept in Lines (and in the log file),
// Exited closes when it ended, and Kill ends it and its group.
type Process struct {
	cmd    *exec.Cmd
	lines  *LineLog
	stdin  io.WriteCloser
	logF   *os.File
	exited chan struct{}
	err    error // Wait's result, valid once exited is closed
	once   sync.Once
	kill   error
}

// Start launches the JVM. The caller must Kill it.
func Start(cfg Config) (*Process, error) {
	java := cfg.Java
	if java == "" {
		var err error
		if java, err = Tool("java"); err != nil {
			return nil, err
		}
	}
	p := &Process{lines: NewLineLog(), exited: make(chan struct{})}
	var out io.Writer = p.lines
	if cfg.LogFile != "" {
		f, err := os.Create(cfg.LogFile)
		if err != nil {
			return nil, fmt.Errorf("creating the JVM's log: %w", err)
		}
		p.logF = f
		out = io.MultiWriter(f, p.lines)
	}
	p.cmd = exec.Command(java, cfg.Args...)
	p.cmd.Dir = cfg.Dir
	// A child of the JVM that keeps its output open must not keep the JVM
	// from counting as exited.
	p.cmd.WaitDelay = outputDrainTimeout
	// The same writer for both streams: exec then copies them through one
	// pipe, one write at a time, so lines do not interleave.
	p.cmd.Stdout, p.cmd.Stderr = out, out
	setGroup(p.cmd)
	if cfg.Stdin {
		in, err := p.cmd.StdinPipe()
		if err != nil {
			p.closeLog()
			return nil, fmt.Errorf("starting java: %w", err)
		}
		p.stdin = in
	}
	if err := p.cmd.Start(); err != nil {
		p.closeLog()
		return nil, fmt.Errorf("starting java: %w", err)
	}
	go func() {
		p.err = p.cmd.Wait()
		p.closeLog()
		close(p.exited)
	}()
	return p, nil
}

func (p *Process) closeLog() {
	if p.logF != nil {
		p.logF.Close()
	}
}

// PID is the JVM's process id.
func (p *Process) PID() int { return p.cmd.Process.Pid }

// Lines is everything the JVM printed so far, line by line.
func (p *Process) Lines() *LineLog { return p.lines }

// Exited is closed once the JVM has exited and its output is drained.
func (p *Process) Exited() <-chan struct{} { return p.exited }

// Running reports whether the JVM has not exited.
func (p *Process) Running() bool {
	select {
	case <-p.exited:
		return false
	default:
		return true
	}
}

// Signal sends sig to the JVM (not its group).
func (p *Process) Signal(sig os.Signal) error { return p.cmd.Process.Signal(sig) }

// WriteLine writes s and a newline to the JVM's standard input (Config.Stdin).
func (p *Process) WriteLine(s string) error {
	if p.stdin == nil {
		return errors.New("the JVM was started without a standard input pipe")
	}
	_, err := io.WriteString(p.stdin, s+"\n")
	return err
}

// WaitLine returns the index of the first line at or after from that match
// accepts, waiting at most wait (then the error wraps ErrNoLine) and until
// ctx ends; it fails early, wrapping ErrExited, when the JVM exits first.
func (p *Process) WaitLine(ctx context.Context, from int, wait time.Duration, match func(string) bool) (int, error) {
	i, err := p.lines.waitFor(ctx, from, wait, match, p.exited)
	if errors.Is(err, errAborted) {
		// Exited closes after the output is drained: one last look.
		if i, err := p.lines.WaitFor(from, 0, match); err == nil {
			return i, nil
		}
		return 0, fmt.Errorf("%w (%v)", ErrExited, p.err)
	}
	return i, err
}

// ErrExited means the JVM exited while a line was awaited.
var ErrExited = errors.New("the JVM exited")

// Kill ends the JVM and its process group with SIGKILL and waits, at most
// KillTimeout, until it is reaped; it is idempotent and returns
// ErrNotReaped when the wait ran out.
func (p *Process) Kill() error {
	p.once.Do(func() {
		if p.stdin != nil {
			p.stdin.Close()
		}
		killGroup(p.cmd)
		select {
		case <-p.exited:
		case <-time.After(KillTimeout):
			p.kill = fmt.Errorf("%w (pid %d, %v)", ErrNotReaped, p.PID(), KillTimeout)
		}
	})
	return p.kill
}
