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
	// LogStarted receives the absolute path of the build's log once it is
	// created, before the hold is asked for; nil means none.
	LogStarted func(path string)

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
// A build goes through four stages, each handing its result to the next:
// admit (admit.go: everything until its turn), run (below: its owner and
// log, its hold session, the supervised build), prove (prove.go: the
// changed classes and their proof) and answer (answer.go: the result, its
// outcome, detail and counts).
func (b *Builder) Run(ctx context.Context, req Request) (res *Result) {
	adm := b.admit(ctx, req)
	defer func() { adm.close(res) }()
	ran := b.run(ctx, adm)
	defer ran.close()
	proof := b.prove(ran)
	return answer(proof)
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

// ran is what the run stage hands the proof: how the admitted build's
// command and its hold session ended. A build that was not admitted, or
// whose owner, log or hold session could not be readied (unready), never
// ran: outcome is "".
type ran struct {
	adm *admission

	// what the build that had its turn runs with (ready)
	unready unready
	bctx    context.Context    // the call's context within the time limit (errBuildTimeout)
	cancel  context.CancelFunc // cancels bctx
	owner   *string            // the owner the hold is asked for
	attempt *attempt
	guard   *buildguard.Guard

	code     int           // what the guard returned
	err      error         // what the guard returned, or why the build is unready
	duration time.Duration // from asking for the hold to the finish
	outcome  string
	exitCode *int // the command's own exit code, or 127 when it could not run
	stopping bool // the build was cancelled because the server is stopping
	told     exchange

	output  Output
	diag    diagnostics.Summary
	capture *capture // the build's output; nil when no command was given it
}

// unready is why a build that had its turn did not start: err says what
// went wrong; nothing was asked of the agent and no hold was taken.
type unready int

const (
	readied      unready = iota
	unreadyOwner         // the project's owner token
	unreadyLog           // the build's log
	unreadyGuard         // the hold session
)

// run readies the admitted build (ready), runs it on its hold session
// within its time limit and says how it ended; cancelling ctx, the call's
// context, or Stop ends it. close releases what it holds.
func (b *Builder) run(ctx context.Context, adm *admission) *ran {
	r := &ran{adm: adm}
	if adm.denied != admitted {
		return r
	}
	if r.ready(); r.unready != readied {
		return r
	}
	start := time.Now()
	r.code, r.err = r.guard.Run(r.bctx, adm.req.Build.Command)
	r.duration = time.Since(start)
	run := r.attempt
	r.output, r.diag = run.finishOutput()
	r.capture = run.capture
	r.stopping = errors.Is(context.Cause(r.bctx), errStopping)
	r.outcome = outcome(ctx, r.bctx, r.code, r.err)
	switch {
	case run.exited: // the command's own code, also when the guard reports 1
		r.exitCode = &run.code
	case errors.Is(r.err, buildguard.ErrCannotRun):
		code := r.code
		r.exitCode = &code // 127, as a shell reports it
	}
	r.told = run.agent.last()
	return r
}

// ready readies the build that has its turn, within the admission's
// context: its context within its time limit and its hold session's
// configuration, then its owner and its log from the project's state
// directory (readyState), the log created before anything is asked of the
// agent so that a log folder that cannot be written refuses the build
// with nothing held (docs/safe-build.md#9), and last its hold session.
func (r *ran) ready() {
	a := r.adm
	r.bctx, r.cancel = context.WithTimeoutCause(a.sctx, a.timeout, errBuildTimeout)
	r.attempt = &attempt{b: a.b, req: a.req, ctx: r.bctx}
	cfg := a.b.guardConfig(a.req, r.attempt)
	owner, f, err := readyState(a.req.Dir, a.req.Build.Name, time.Now())
	var logErr *logError
	switch {
	case errors.As(err, &logErr):
		r.unready, r.err = unreadyLog, logErr.err
		return
	case err != nil:
		r.unready, r.err = unreadyOwner, err
		return
	}
	r.attempt.logFile, r.attempt.logPath = f, f.Name()
	if a.req.LogStarted != nil {
		a.req.LogStarted(f.Name())
	}
	r.owner, cfg.Owner = &owner, owner
	if r.guard, err = buildguard.New(cfg); err != nil { // only an invalid owner, which readyState never returns
		r.unready, r.err = unreadyGuard, err
	}
}

// guardConfig configures the core's hold session for one attempt, but for
// its owner: its connection, runner and environment come from the attempt;
// the process's signals are not the build's.
func (b *Builder) guardConfig(req Request, run *attempt) buildguard.Config {
	return buildguard.Config{
		Endpoint:  req.Endpoint,
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
	}
}

// env is the environment of the builds' commands before their turn and
// ActiveEnv are added (Config.Env).
func (b *Builder) env() []string {
	if b.cfg.Env != nil {
		return b.cfg.Env
	}
	return os.Environ()
}

// close releases what the run holds: the attempt's files and connections
// and the build's context.
func (r *ran) close() {
	if r.attempt != nil {
		r.attempt.close()
	}
	if r.cancel != nil {
		r.cancel()
	}
}

// pastDeadline reports whether ctx's deadline has passed, also in the
// moment before its timer marks it done: a socket deadline set from it can
// fire first, and the build then ended by its time limit all the same.
func pastDeadline(ctx context.Context) bool {
	d, ok := ctx.Deadline()
	return ok && !time.Now().Before(d)
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

// attempt is the state of one Run that the guard's hooks share.
type attempt struct {
	b   *Builder
	req Request

	// agent records what the agent was told and acknowledged
	agent recorder

	// ctx is the build's context (its timeout, the call's cancellation),
	// which bounds the search after the command exited.
	ctx context.Context

	// the search for changed classes (prove.go): the watched directories
	// and their class files before the hold, then the changed files right
	// after the command exited 0, and the connection that found them
	search      search
	knownBefore bool // DOCTOR named the watched directories before the hold
	before      snapshot
	changed     []changedFile
	after       bool // the search after the build ran
	proof       *agentproto.Conn

	// the build's log, created before the hold (ready)
	logPath string
	logFile *os.File

	// set by newRunner
	devnull *os.File
	capture *capture
	limiter *limiter

	// set by the recording runner
	started, exited bool
	code            int
}

// dial connects for the guard, confirms the project when asked, and notes
// the agent's watched directories and their class files before the hold is
// taken (prove.go).
func (a *attempt) dial(ctx context.Context, port int) (buildguard.Agent, error) {
	conn, err := a.b.open(ctx, port, a.req.Confirm)
	if err != nil {
		return nil, err
	}
	a.searchBefore(ctx, conn)
	a.agent.Agent = conn
	return &a.agent, nil
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

// finishOutput stops progress, completes the log, and returns the output
// and the diagnostics found in it; none when no command was given it.
func (a *attempt) finishOutput() (Output, diagnostics.Summary) {
	if a.limiter != nil {
		a.limiter.close()
		a.limiter = nil
	}
	if a.capture == nil {
		return Output{}, diagnostics.Summary{}
	}
	if err := a.capture.flush(); err != nil {
		a.b.log.Warn("writing the build log failed; it is incomplete", "log", a.logPath, "error", err)
	}
	var out Output
	out.Tail, out.Lines, out.Truncated = a.capture.summary()
	d := a.capture.diagnostics()
	path := a.logPath
	out.LogFile = &path
	return out, d
}

func (a *attempt) close() {
	a.before.watch.close()
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
