package safebuild

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"sync"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/buildguard/buildguard/agentproto"
	"github.com/buildguard/buildguard/buildguard"
	"github.com/buildguard/buildguard/service/buildqueue"
	"github.com/buildguard/buildguard/service/diagnostics"
)

// ActiveEnv is set in the environment of every safe build's command. A safe
// build started while it is set is refused: nested under another safe build
// of the same project it would share that build's owner and could release
// its half-built output (docs/safe-build.md#4).
const ActiveEnv = "BUILDGUARD_SAFE_BUILD_ACTIVE"

// Config configures a Builder. The zero value is ready to use.
type Config struct {
	// Dialer connects to agents. The zero value is agentproto's default;
	// its timeouts are set from AgentTimeout.
	Dialer agentproto.Dialer
	// AgentTimeout bounds the connect, the handshake and each exchange with
	// the agent separately; 0 means buildguard.DefaultTimeout (5 s).
	AgentTimeout time.Duration
	// Grace is how long a cancelled or timed-out build may take to stop
	// after SIGTERM before its process group is killed, and how long the
	// rest of its group may outlive a clean exit; 0 means
	// buildguard.DefaultGrace (10 s).
	Grace time.Duration
	// VerifyWait bounds the verification of the changed classes after an
	// ok build, and each search of the watched directories (before the
	// hold, after the command exited); 0 means DefaultVerifyWait (15 s).
	VerifyWait time.Duration
	// ProgressInterval is the shortest time between progress reports; 0
	// means ProgressInterval (200 ms).
	ProgressInterval time.Duration
	// Env is the command's environment before ActiveEnv is added; nil means
	// the process's own.
	Env []string
	// Logger receives diagnostics; nil means none. Owner tokens are never
	// logged.
	Logger hclog.Logger
	// Queue admits the builds, one at a time per project across every
	// process (docs/decisions.md#D18); nil means a buildqueue.Queue with
	// its defaults (BUILDGUARD_MAX_BUILDS from the environment).
	Queue *buildqueue.Queue
}

// Builder runs safe builds. Each waits for its turn in its project's build
// queue (docs/safe-build.md#4), whichever process queued the others. It is
// safe for concurrent use.
type Builder struct {
	cfg Config
	log hclog.Logger

	mu      sync.Mutex
	builds  map[*running]struct{} // every Run in progress, waiting or running
	stopped bool                  // Stop was called: no build starts any more
}

// running is a build a Builder waits for or runs now.
type running struct {
	cancel context.CancelCauseFunc // cancels the build, with errStopping from Stop
	done   chan struct{}           // closed when Run released the build
}

// errStopping is the cause of a build Stop cancelled.
var errStopping = errors.New("the server is stopping")

// New returns a Builder with cfg's defaults filled in.
func New(cfg Config) *Builder {
	if cfg.AgentTimeout == 0 {
		cfg.AgentTimeout = buildguard.DefaultTimeout
	}
	if cfg.Grace == 0 {
		cfg.Grace = buildguard.DefaultGrace
	}
	if cfg.VerifyWait == 0 {
		cfg.VerifyWait = DefaultVerifyWait
	}
	if cfg.ProgressInterval == 0 {
		cfg.ProgressInterval = ProgressInterval
	}
	if cfg.Logger == nil {
		cfg.Logger = hclog.NewNullLogger()
	}
	if cfg.Queue == nil {
		cfg.Queue = buildqueue.New(buildqueue.Config{Logger: cfg.Logger.Named("queue")})
	}
	cfg.Dialer.ConnectTimeout = cfg.AgentTimeout
	cfg.Dialer.HandshakeTimeout = cfg.AgentTimeout
	return &Builder{cfg: cfg, log: cfg.Logger}
}

// Request is one safe build.
type Request struct {
	// Dir is the project directory, absolute: the command's working
	// directory and the home of its logs and owner file. Required.
	Dir string
	// Build is the build to run (from Project.Select). Required.
	Build Build
	// Timeout limits the build; 0 means Build.Timeout.
	Timeout time.Duration
	// Endpoint selects the agent.
	Endpoint agentproto.Endpoint
	// Confirm, when not "", is the project directory the agent's working
	// directory must lie in (the explicit-project gate of
	// docs/mcp-server.md#1.2); "" confirms nothing.
	Confirm string
	// Progress receives progress reports; nil means none.
	Progress ProgressFunc
	// Advice words a refusal's fix, and how to allow a build that ran out
	// of time more (buildguard.FixBuildTime), for the front that asked for
	// the build, in the names its users give the settings (tool arguments,
	// flags); nil words none.
	Advice buildguard.Advice
	// Queued receives where the build stands while it waits in the
	// project's build queue, one line each; nil means none.
	Queued func(message string)

	turnEnv []string                    // set by Run: proves the build's turn to its command
	started func(pid int, session bool) // set by Run: records the command's processes in the turn
}

// errBuildTimeout is the cause of a build's own deadline.
var errBuildTimeout = errors.New("the build ran out of time")

// Run runs one safe build and returns its result; it never returns an
// error, every failure is an outcome. Cancelling ctx cancels the build: its
// process group is terminated (SIGTERM, Grace, SIGKILL) and BUILD failed is
// sent and awaited before Run returns.
//
// The steps, each its own function: refuse a nested build, claim a place
// among the server's builds (Stop ends them all), wait for the build's turn
// in the project's queue (docs/decisions.md#D18), then run the claimed
// build (owner, log, hold, command, finish, proof).
func (b *Builder) Run(ctx context.Context, req Request) *Result {
	// changedClasses stays empty unless the build is ok: nothing was searched.
	res := &Result{Build: req.Build.Name, Command: req.Build.Command, ChangedClasses: ChangedClasses{Classes: []ClassReceipt{}}}
	if _, nested := os.LookupEnv(ActiveEnv); nested {
		res.refuse("refused: this is already inside a safe build (" + ActiveEnv + " is set); a nested build would share the outer build's hold. Run the build command directly instead")
		return res
	}
	sctx, stop := context.WithCancelCause(ctx)
	defer stop(nil)
	r, stopped := b.claim(stop)
	if stopped {
		res.refuse("refused: the server is stopping; nothing ran")
		return res
	}
	defer b.release(r)
	turn, joined := b.admit(ctx, sctx, req)
	switch {
	case joined != nil:
		return joined
	case turn.err != nil:
		return turn.result(res)
	}
	req.turnEnv, req.started = turn.Env(), turn.Started
	defer func() { turn.Release(shareable(res)) }()
	b.runClaimed(ctx, sctx, req, res)
	turn.note(res)
	return res
}

// refuse ends res before anything was asked of the agent, and says so
// (docs/decisions.md#D21).
func (r *Result) refuse(detail string) {
	r.Outcome, r.Detail = OutcomeRefused, detail+"; "+exchange{}.String()
}

// runClaimed runs the build that holds the server's slot: ctx is the
// call's context, sctx the one Stop cancels.
func (b *Builder) runClaimed(ctx, sctx context.Context, req Request, res *Result) {
	owner, err := projectOwner(req.Dir)
	if err != nil {
		res.refuse("refused: the project's owner token: " + err.Error())
		return
	}
	timeout := buildTimeout(req)
	bctx, cancel := context.WithTimeoutCause(sctx, timeout, errBuildTimeout)
	defer cancel()

	run := &attempt{b: b, req: req, ctx: bctx}
	defer run.close()
	if err := run.openLog(); err != nil {
		res.refuse("refused: the build log cannot be written, so nothing was asked of the agent: " + err.Error())
		return
	}
	res.Owner = &owner
	g, err := b.guard(req, owner, run)
	if err != nil { // only an invalid owner, which projectOwner never returns
		res.refuse("refused: " + err.Error())
		return
	}
	start := time.Now()
	code, err := g.Run(bctx, req.Build.Command)
	res.DurationMs = time.Since(start).Milliseconds()
	run.finishOutput(res)

	stopping := errors.Is(context.Cause(bctx), errStopping)
	res.Outcome = outcome(ctx, bctx, code, err)
	switch {
	case run.exited: // the command's own code, also when the guard reports 1
		res.ExitCode = &run.code
	case errors.Is(err, buildguard.ErrCannotRun):
		res.ExitCode = &code // 127, as a shell reports it
	}
	res.Detail = describe(res, err, timeout, stopping, run.agent.last(), req.Advice)
	if run.capture != nil {
		res.Detail += run.capture.logNote()
	}
	if res.Outcome == OutcomeOK {
		b.prove(sctx, run, res) // Stop ends the verification too
	}
}

// pastDeadline reports whether ctx's deadline has passed, also in the
// moment before its timer marks it done: a socket deadline set from it can
// fire first, and the build then ended by its time limit all the same.
func pastDeadline(ctx context.Context) bool {
	d, ok := ctx.Deadline()
	return ok && !time.Now().Before(d)
}

// buildTimeout is the call's timeout, else the build's, else the default.
func buildTimeout(req Request) time.Duration {
	switch {
	case req.Timeout > 0:
		return req.Timeout
	case req.Build.Timeout > 0:
		return req.Build.Timeout
	}
	return DefaultBuildTimeout
}

// guard is the core's hold session for one attempt: its connection, runner
// and environment come from the attempt; the process's signals are not the
// build's.
func (b *Builder) guard(req Request, owner string, run *attempt) (*buildguard.Guard, error) {
	return buildguard.New(buildguard.Config{
		Endpoint:  req.Endpoint,
		Owner:     owner,
		Timeout:   b.cfg.AgentTimeout,
		Grace:     b.cfg.Grace,
		Dir:       req.Dir,
		Env:       append(append(append([]string(nil), b.env()...), req.turnEnv...), ActiveEnv+"=1"),
		Stderr:    io.Discard, // the owner is in the result
		Logger:    b.log.Named("guard"),
		Dial:      run.dial,
		NewRunner: run.newRunner,
		Started:   req.started,
		Signals:   make(chan os.Signal),
	})
}

// outcome classifies what the guard returned. A build whose BUILD ok was
// acknowledged is ok, even when the timeout or a cancellation arrived while
// the acknowledgement was on its way: the agent released its output
// (docs/decisions.md#D21).
func outcome(ctx, bctx context.Context, code int, err error) string {
	switch {
	case err == nil && code == 0:
		return OutcomeOK
	case errors.Is(context.Cause(bctx), errBuildTimeout) || pastDeadline(bctx):
		return OutcomeTimeout
	case ctx.Err() != nil || errors.Is(context.Cause(bctx), errStopping):
		return OutcomeCancelled
	case errors.Is(err, buildguard.ErrRefused):
		return OutcomeRefused
	}
	return OutcomeFailed
}

func (b *Builder) env() []string {
	if b.cfg.Env != nil {
		return b.cfg.Env
	}
	return os.Environ()
}

// claim registers a build, cancelled by cancel when the Builder stops; it
// reports stopped when the Builder no longer starts builds.
func (b *Builder) claim(cancel context.CancelCauseFunc) (r *running, stopped bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.stopped {
		return nil, true
	}
	if b.builds == nil {
		b.builds = map[*running]struct{}{}
	}
	r = &running{cancel: cancel, done: make(chan struct{})}
	b.builds[r] = struct{}{}
	return r, false
}

func (b *Builder) release(r *running) {
	b.mu.Lock()
	delete(b.builds, r)
	close(r.done)
	b.mu.Unlock()
}

// Stop cancels every build, waiting or running, as the cancellation of its
// call would (a running build's process group is stopped and BUILD failed
// confirmed; a waiting one leaves the queue), waits until they have ended,
// and refuses every later build: for a server that is about to exit.
func (b *Builder) Stop() {
	b.mu.Lock()
	b.stopped = true
	var all []*running
	for r := range b.builds {
		all = append(all, r)
	}
	b.mu.Unlock()
	for _, r := range all {
		r.cancel(errStopping)
	}
	for _, r := range all {
		<-r.done
	}
}

// ended says how the command of a build that was cancelled or ran out of
// time ended. One that had exited 0 by itself is not said to have been
// terminated: the cancellation came after, before BUILD ok was sent (while
// the changed classes were searched, or its group's last members waited).
func ended(res *Result) string {
	if res.ExitCode != nil && *res.ExitCode == 0 {
		return "its command had exited 0, but BUILD ok was not sent yet"
	}
	return "its process group was terminated"
}

// describe is the result's detail: what happened, what the agent was last
// told and acknowledged (never a guess, docs/decisions.md#D21), and what to
// do next.
func describe(res *Result, err error, timeout time.Duration, stopping bool, told exchange, advice buildguard.Advice) string {
	var ie *buildguard.InterruptedError
	ran := errors.As(err, &ie) && ie.Ran
	var left *buildguard.StragglersError
	var lost *buildguard.UnconfirmedError
	switch {
	case res.Outcome == OutcomeRefused:
		// The core's refusal says whether BUILD started was sent and how the
		// agent answered the BUILD failed that followed it; the front's
		// advice says what to do next.
		return advice.Word(err)
	case res.Outcome == OutcomeOK:
		return "the build exited 0 and " + told.String()
	case errors.As(err, &left):
		return fmt.Sprintf("the build exited 0, but %s; they were killed after the grace period and %s. Make the build wait for what it starts", left, told)
	case res.Outcome == OutcomeTimeout && !ran:
		return fmt.Sprintf("the build ran out of time (%s) before its command started; nothing ran; %s", timeout, told)
	case res.Outcome == OutcomeTimeout:
		text := fmt.Sprintf("the build ran out of time (%s): %s and %s", timeout, ended(res), told)
		if w := advice[buildguard.FixBuildTime]; w != "" {
			text += ". " + w // how the front's users allow more time
		}
		return text
	case res.Outcome == OutcomeCancelled:
		what := "the build was cancelled"
		if stopping {
			what = "the build was cancelled because the server is stopping"
		}
		if !ran {
			return what + " before its command started; nothing ran; " + told.String()
		}
		return what + ": " + ended(res) + " and " + told.String()
	case errors.As(err, &lost) && lost.Launch == nil && res.ExitCode != nil:
		return fmt.Sprintf("the build exited with code %d, but BUILD %s was not acknowledged (%v); %s", *res.ExitCode, lost.State, lost.Err, told)
	case err != nil && !errors.Is(err, buildguard.ErrUnsafe):
		return err.Error() + "; " + told.String()
	case res.ExitCode != nil && *res.ExitCode != 0:
		return fmt.Sprintf("the build exited with code %d; %s. Read output.tail (and output.logFile), fix the build and call again", *res.ExitCode, told)
	case err != nil:
		return err.Error() + "; " + told.String()
	}
	return "the build failed; " + told.String()
}

// attempt is the state of one Run that the guard's hooks share.
type attempt struct {
	b   *Builder
	req Request

	// agent records what the agent was told and acknowledged
	agent recorder

	// ctx is the build's context (its timeout, the call's cancellation),
	// which bounds the search after the command exited.
	ctx context.Context

	// the search for changed classes (proof.go): the watched directories
	// and their class files before the hold, then the changed files right
	// after the command exited 0, and the connection that found them
	search      search
	knownBefore bool // DOCTOR named the watched directories before the hold
	before      snapshot
	changed     []changedFile
	after       bool // the search after the build ran
	proof       *agentproto.Conn

	// set by newRunner
	logPath string
	logFile *os.File
	devnull *os.File
	capture *capture
	limiter *limiter

	// set by the recording runner
	started, exited bool
	code            int
}

// dial connects for the guard, confirms the project when asked, and notes
// the agent's watched directories and their class files before the hold is
// taken (proof.go).
func (a *attempt) dial(ctx context.Context, port int) (buildguard.Agent, error) {
	conn, err := a.b.open(ctx, port, a.req.Confirm)
	if err != nil {
		return nil, err
	}
	a.searchBefore(ctx, conn)
	a.agent.Agent = conn
	return &a.agent, nil
}

// open connects to port and runs the project gate when confirm is set.
func (b *Builder) open(ctx context.Context, port int, confirm string) (*agentproto.Conn, error) {
	conn, err := b.cfg.Dialer.Dial(ctx, port)
	if err != nil {
		return nil, err
	}
	if confirm != "" {
		gctx, cancel := context.WithTimeout(ctx, b.cfg.AgentTimeout)
		err := conn.ConfirmProject(gctx, confirm)
		cancel()
		if err != nil {
			conn.Close()
			return nil, err
		}
	}
	return conn, nil
}

// openLog creates the build's log before anything is asked of the agent:
// a log folder that cannot be written refuses the build with nothing held
// (docs/safe-build.md#9). A log that no command wrote is removed by close.
func (a *attempt) openLog() error {
	f, err := createLog(a.req.Dir, a.req.Build.Name, time.Now())
	if err != nil {
		return err
	}
	a.logFile, a.logPath = f, f.Name()
	return nil
}

// newRunner gives the command pipes into the capture (and the log opened
// before the hold), stdin /dev/null and its own process group.
func (a *attempt) newRunner(c buildguard.Command) buildguard.Runner {
	null, err := os.Open(os.DevNull)
	if err != nil {
		return failedRunner{fmt.Errorf("%w: opening %s: %w", buildguard.ErrCannotRun, os.DevNull, err)}
	}
	a.devnull = null
	f := a.logFile
	var onLine func()
	a.capture = newCapture(f, a.req.Build.MaxLogBytes, func() {
		if onLine != nil {
			onLine()
		}
	})
	a.capture.parser = diagnostics.New(diagnostics.Config{Dir: a.req.Dir})
	if a.req.Progress != nil {
		a.limiter = newLimiter(a.req.Progress, a.capture.progress, a.b.cfg.ProgressInterval)
		onLine = a.limiter.line
	}
	c.Stdin, c.Stdout, c.Stderr, c.Transcript = null, a.capture, a.capture, nil
	return &recordingRunner{Runner: buildguard.NewExecRunner(c), a: a}
}

// finishOutput stops progress, completes the log and fills res.Output.
func (a *attempt) finishOutput(res *Result) {
	if a.limiter != nil {
		a.limiter.close()
		a.limiter = nil
	}
	if a.capture == nil {
		return
	}
	if err := a.capture.flush(); err != nil {
		a.b.log.Warn("writing the build log failed; it is incomplete", "log", a.logPath, "error", err)
	}
	res.Output.Tail, res.Output.Lines, res.Output.Truncated = a.capture.summary()
	d := a.capture.diagnostics()
	res.Diagnostics, res.DiagnosticsOmitted = d.Diagnostics, d.Omitted
	res.Errors, res.Warnings = d.Errors, d.Warnings
	res.FailedTasks, res.FailedModules = d.FailedTasks, d.FailedModules
	path := a.logPath
	res.Output.LogFile = &path
}

func (a *attempt) close() {
	if a.limiter != nil {
		a.limiter.close()
	}
	if a.logFile != nil {
		a.logFile.Close()
		if a.capture == nil { // no command was given it: not a build's log
			_ = os.Remove(a.logPath)
		}
	}
	if a.devnull != nil {
		a.devnull.Close()
	}
	if a.proof != nil {
		a.proof.Close()
	}
}

// recordingRunner remembers whether the command started and its own exit
// code, which the guard replaces by 1 when the finish was not confirmed.
type recordingRunner struct {
	buildguard.Runner
	a *attempt
}

func (r *recordingRunner) Start() error {
	err := r.Runner.Start()
	r.a.started = err == nil
	return err
}

func (r *recordingRunner) Wait() (int, error) {
	code, err := r.Runner.Wait()
	var left *buildguard.StragglersError
	if err == nil || errors.As(err, &left) {
		r.a.code, r.a.exited = code, true
	}
	if err == nil && code == 0 {
		// Before BUILD ok: the agent still holds, nothing is reloaded, and
		// what is hashed now is what the build wrote.
		r.a.searchAfter()
	}
	return code, err
}

// failedRunner is a Runner whose Start fails: the guard then sends BUILD
// failed and reports ErrCannotRun.
type failedRunner struct{ err error }

func (f failedRunner) Start() error           { return f.err }
func (f failedRunner) Wait() (int, error)     { return 0, f.err }
func (f failedRunner) Signal(os.Signal) error { return nil }
func (f failedRunner) Kill() error            { return nil }
func (f failedRunner) Resize() error          { return nil }
func (f failedRunner) Close() error           { return nil }
