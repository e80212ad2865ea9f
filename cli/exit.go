package cli

// ExitCode is the process exit status of a buildguard invocation.
type ExitCode int

// The exit codes buildguard itself chooses. A wrapped build whose finish was
// confirmed exits with the child's own code instead, and a wrapped build
// interrupted by signal n (SIGINT, SIGTERM, SIGHUP, SIGQUIT) exits 128+n.
const (
	// ExitOK: the command did what was asked.
	ExitOK ExitCode = 0
	// ExitFailure: a tool result that is an error, a refused build, or a finish
	// that was not confirmed.
	ExitFailure ExitCode = 1
	// ExitUsage: the arguments were invalid; nothing connected.
	ExitUsage ExitCode = 2
	// ExitCannotRun: the child could not be started (after BUILD failed was acknowledged).
	ExitCannotRun ExitCode = 127
)
