package buildguard

import (
	"errors"
	"fmt"
	"os"
	"syscall"
)

// The outcomes of a guarded build other than a confirmed finish. Each error
// Guard.Run returns wraps exactly one of them (or is an *InterruptedError);
// the command line maps them to its exit codes and prints their text.
var (
	// ErrInvalidOwner means an owner token does not match
	// ^[A-Za-z0-9_-]{1,64}$. Nothing was connected.
	ErrInvalidOwner = errors.New("invalid owner token")
	// ErrRefused means the build was refused before its command started: the
	// agent could not be found or reached, the handshake failed, or
	// `BUILD started` was rejected or not acknowledged in time. The command
	// never ran. Guard.Run returns it as a *RefusalError.
	ErrRefused = errors.New("build refused")
	// ErrCannotRun means the command could not be started (a missing
	// executable, a permission problem). `BUILD failed` was sent and
	// acknowledged, so the output stays held for this owner.
	ErrCannotRun = errors.New("cannot run the build command")
	// ErrUnsafe means the command ran but its finish was not confirmed: the
	// agent did not acknowledge (or rejected) `BUILD ok` or `BUILD failed`.
	// The agent may still hold the output for this owner; a complete build
	// with the same owner recovers it. An *UnconfirmedError says which BUILD
	// went unacknowledged. It also wraps the ends of a build
	// that the wrapper failed itself after `BUILD failed` was acknowledged:
	// a *StragglersError or a *TerminalStopError.
	ErrUnsafe = errors.New("build did not complete safely")
)

// StragglersError means the command exited 0 while other processes of its
// process group were still running a grace period later: the build's output
// may still be changing, so it is not ok (docs/decisions.md#D12). They were
// killed. Runner.Wait returns it with code 0; Guard.Run then sends
// `BUILD failed` and returns it wrapped in ErrUnsafe. Processes that left the
// group (setsid, a Gradle daemon) are not counted.
type StragglersError struct {
	// N is how many processes were left; -1 when the system can tell that
	// some were but not how many.
	N int
}

func (e *StragglersError) Error() string {
	if e.N < 0 {
		return "processes of the build were still running after it exited"
	}
	return fmt.Sprintf("%d processes of the build were still running after it exited", e.N)
}

// TerminalStopError means the build stopped to read or change the terminal
// (SIGTTIN, SIGTTOU) from the background, and nothing could give it the
// terminal: the wrapper was not in the terminal's foreground and had no job
// control to wait for it there, or the build has no terminal of its own to
// be given. The build was killed rather than waited for forever
// (docs/decisions.md#D12); Runner.Wait returns it with the build's code.
type TerminalStopError struct {
	Signal os.Signal
}

func (e *TerminalStopError) Error() string {
	return fmt.Sprintf("the build stopped to use the terminal (%v) and could not be given it, so it was killed: run it in the terminal's foreground with the terminal on its stdin, or give it its input another way", e.Signal)
}

// InterruptedError means a signal (or the cancellation of Run's context)
// ended the build. When the command was running, it was stopped (signal
// forwarded to its process group, SIGKILL after the grace period) and
// `BUILD failed` was sent on the same connection.
type InterruptedError struct {
	// Signal is the signal received; nil when Run's context ended the build.
	Signal os.Signal
	// Ran reports whether the command had started. When it had not, nothing
	// ran; BUILD failed was sent (best effort) only if the hold had already
	// been acknowledged.
	Ran bool
	// Err is nil when everything owed to the agent was confirmed; otherwise
	// it wraps ErrUnsafe (BUILD failed was not acknowledged) or the
	// context's error.
	Err error
}

func (e *InterruptedError) Error() string {
	if e.Err != nil {
		return e.what() + ": " + e.Err.Error()
	}
	return e.what()
}

// what says what ended the build.
func (e *InterruptedError) what() string {
	if e.Signal != nil {
		return fmt.Sprintf("the build was interrupted by %v", e.Signal)
	}
	return "the build was cancelled"
}

func (e *InterruptedError) Unwrap() error { return e.Err }

// ExitCode is 128 plus the signal number, as a shell reports a process that
// a signal ended; 1 when no signal was involved or when the finish was not
// confirmed (Err wraps ErrUnsafe), like every build that did not complete
// safely; 128 plus the second signal's number when a second interrupt
// ended a wait (Err is an *AbandonedError).
func (e *InterruptedError) ExitCode() int {
	var ab *AbandonedError
	if errors.As(e.Err, &ab) {
		return ab.ExitCode()
	}
	if errors.Is(e.Err, ErrUnsafe) {
		return 1
	}
	if s, ok := e.Signal.(syscall.Signal); ok {
		return 128 + int(s)
	}
	return 1
}

// AbandonedError means a second interrupting signal ended a wait of Run at
// once (docs/decisions.md#D23): the command's process group, if it ran, was
// killed without waiting out the grace period, and the acknowledgement of
// State was not awaited. The agent may still hold the output for this
// owner, until this owner's next complete build.
type AbandonedError struct {
	// Signal is the interrupt that ended the wait.
	Signal os.Signal
	// State is the BUILD state the agent was owed: ok or failed.
	State string
	// Sent reports whether State was written to the connection; false when
	// it could not be (the connection failed, or the Agent cannot send
	// without waiting).
	Sent bool
}

func (e *AbandonedError) Error() string {
	if !e.Sent {
		return fmt.Sprintf("stopped at a second interrupt (%v) before BUILD %s reached the agent; the agent may still hold the output", e.Signal, e.State)
	}
	return fmt.Sprintf("stopped waiting for the agent to acknowledge BUILD %s at a second interrupt (%v); the agent may still hold the output", e.State, e.Signal)
}

// ExitCode is 128 plus the number of the signal that ended the wait.
func (e *AbandonedError) ExitCode() int {
	if s, ok := e.Signal.(syscall.Signal); ok {
		return 128 + int(s)
	}
	return 1
}
