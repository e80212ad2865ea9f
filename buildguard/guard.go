package buildguard

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"sync"
	"time"

	"github.com/buildguard/buildguard/agentproto"
	"github.com/buildguard/buildguard/internal/cycle"
	"github.com/hashicorp/go-hclog"
)

// Agent is one connection to the Reclazz agent, after its handshake.
// *agentproto.Conn satisfies it; tests inject faults through it.
type Agent interface {
	// Build sends `BUILD <state> request=<fresh token> owner=<owner>` and
	// waits, within ctx, for the exactly matching acknowledgement. It
	// returns an error for a rejection, a timeout or a lost connection.
	Build(ctx context.Context, state, owner string) error
	// Close closes the connection; it is idempotent.
	Close() error
}

// The default timings of a guarded build.
const (
	// DefaultTimeout bounds the connect, the handshake and each
	// acknowledgement wait separately.
	DefaultTimeout = 5 * time.Second
	// MaxTimeout is the longest Timeout accepted (60000 ms).
	MaxTimeout = 60 * time.Second
	// DefaultGrace is how long an interrupted command may take to stop
	// after the signal was forwarded, before its process group is killed,
	// and how long the rest of its group may run on after it exited 0
	// (docs/decisions.md#D12).
	DefaultGrace = 10 * time.Second
)

// Config configures a Guard. The zero value guards a build against the agent
// discovered in the working directory, with a fresh owner, the wrapper's own
// stdio and the process's signals.
type Config struct {
	// Endpoint selects the agent. The zero value discovers the port file in
	// the working directory (.reclazz/agent.port, then .idea/reclazz/agent.port).
	Endpoint agentproto.Endpoint
	// Owner is the build's owner token; "" means a fresh random UUID. Reuse
	// the owner of a failed or abandoned build to recover its hold.
	Owner string
	// Timeout bounds the connect, the handshake and each acknowledgement
	// wait separately; 0 means DefaultTimeout (5 s). A value below 1 ms or
	// above MaxTimeout refuses the build.
	Timeout time.Duration
	// Grace is how long an interrupted command may take to stop before its
	// process group is killed, and how long, after the command exited 0,
	// the other processes of its group may take to end before they are
	// killed and the build fails (docs/decisions.md#D12); 0 means
	// DefaultGrace (10 s), a negative value kills at once.
	Grace time.Duration
	// Dir is the command's working directory; "" means ours.
	Dir string
	// Env is the command's environment; nil means ours.
	Env []string
	// Stdin is the command's input; nil means os.Stdin.
	Stdin io.Reader
	// Stdout receives the command's output; nil means os.Stdout. Nothing else
	// is ever written to it.
	Stdout io.Writer
	// Stderr receives the command's error output, the owner line and nothing
	// else from the guard; nil means os.Stderr.
	Stderr io.Writer
	// OwnerLine, when not nil, words the line Run prints on Stderr before it
	// connects, telling the user the owner that recovers the build
	// (docs/decisions.md#D8) in the front's terms; nil prints none. It is the
	// only place an owner token is ever shown.
	OwnerLine func(owner string) string
	// WaitLine, when not nil, words the line Run prints on Stderr when it
	// waits for the agent after an interrupt (docs/decisions.md#D23): what
	// it waits for, how long at most, and that a second interrupt ends the
	// wait; nil prints none.
	WaitLine func(Wait) string
	// Transcript, when not nil, receives a copy of everything the command
	// printed (stdout and stderr).
	Transcript io.Writer
	// Logger receives the guard's diagnostics; nil means none. Owner tokens
	// are never logged.
	Logger hclog.Logger
	// Dial connects to the agent on port and reads its handshake within ctx;
	// nil means agentproto.Dialer with ConnectTimeout set to Timeout.
	Dial func(ctx context.Context, port int) (Agent, error)
	// NewRunner returns the Runner for the command; nil means DefaultRunner
	// (a pty when Stdout is a terminal, plain stdio otherwise).
	NewRunner func(Command) Runner
	// Signals delivers the signals the build reacts to: SIGINT, SIGTERM,
	// SIGHUP and SIGQUIT interrupt it, SIGWINCH resizes its terminal. nil means the
	// process's own signals, caught before the hold is asked for and until
	// Run returns.
	Signals <-chan os.Signal
	// KeepSignals leaves the signals Run caught (its own and SIGPIPE) caught
	// when it returns, instead of releasing them: for a process that exits as
	// soon as Run returns, as the buildguard command does, releasing them
	// only delays the exit. Signals that arrive after Run returned are
	// dropped, so a process that goes on must leave it false.
	KeepSignals bool
	// Admit, when not nil, waits for the build's turn before the agent is
	// reached (the project's build queue, docs/decisions.md#D18). It
	// returns variables for the command's environment and a release that
	// Run calls once the build has ended; an error refuses the build. Its
	// ctx ends on an interrupting signal: a build interrupted while it
	// waits ran nothing and took no hold. It runs while the process's
	// signals are being caught (Signals nil), so that taking a turn that
	// is free costs no wait for the catch: it tells the user nothing
	// before SignalsCaught(ctx) is closed, and a build told it waits
	// hears the interrupt that follows.
	Admit func(ctx context.Context) (env []string, release func(), err error)
	// Started, when not nil, is called once the command of Run runs, with
	// the id of its process group's leader (and, with session, its
	// session's): the project's build queue records them, so that no later
	// build starts while a process of this one runs, even when this
	// process is killed (docs/decisions.md#D22). A continuous build's
	// cycles are not recorded.
	Started func(pid int, session bool)

	// Set by Options.Config: a refusal found in the options, reported by
	// Run after the owner line, and the transcript file Run creates.
	refusal        *RefusalError
	transcriptPath string
}

// Wait is a wait for the agent that follows an interrupt
// (docs/decisions.md#D23), as Config.WaitLine words it.
type Wait struct {
	// State is the BUILD state whose acknowledgement is awaited.
	State string
	// Limit is the longest the wait lasts (Config.Timeout).
	Limit time.Duration
}

// Guard runs builds under an owned hold. It is immutable; each Run is one
// session with its own connection.
type Guard struct {
	cfg   Config
	owner string
	log   hclog.Logger
}

// New checks cfg and fills in its defaults. An invalid owner token is the
// only error (wrapping ErrInvalidOwner); everything else is reported by Run,
// after the owner line.
func New(cfg Config) (*Guard, error) {
	owner, err := NewOwner(cfg.Owner)
	if err != nil {
		return nil, err
	}
	if cfg.Timeout == 0 {
		cfg.Timeout = DefaultTimeout
	}
	if cfg.Grace == 0 {
		cfg.Grace = DefaultGrace
	}
	if cfg.Stdin == nil {
		cfg.Stdin = os.Stdin
	}
	if cfg.Stdout == nil {
		cfg.Stdout = os.Stdout
	}
	if cfg.Stderr == nil {
		cfg.Stderr = os.Stderr
	}
	if cfg.Logger == nil {
		cfg.Logger = hclog.NewNullLogger()
	}
	if cfg.Dial == nil {
		// The connect and the handshake get a Timeout each (docs/mcp-server.md#6).
		d := agentproto.Dialer{ConnectTimeout: cfg.Timeout, HandshakeTimeout: cfg.Timeout}
		cfg.Dial = func(ctx context.Context, port int) (Agent, error) {
			c, err := d.Dial(ctx, port)
			if err != nil {
				return nil, err
			}
			return c, nil
		}
	}
	if cfg.NewRunner == nil {
		cfg.NewRunner = DefaultRunner
	}
	return &Guard{cfg: cfg, owner: owner, log: cfg.Logger}, nil
}

// Owner returns the build's owner token.
func (g *Guard) Owner() string { return g.owner }

// Run guards one build of argv (run directly, never through a shell):
//
//  1. print the owner line on Stderr;
//  2. resolve the endpoint, connect, read the handshake, send
//     `BUILD started` and wait for its acknowledgement (else ErrRefused,
//     and the command never runs);
//  3. start the command (else `BUILD failed`, acknowledged, and ErrCannotRun
//     with code 127) and supervise it, forwarding signals;
//  4. send `BUILD ok` when it exited 0, `BUILD failed` otherwise, and wait
//     for the acknowledgement (else ErrUnsafe, after a best-effort
//     `BUILD failed` when `ok` was not confirmed).
//
// It returns the command's exit code (128+n when signal n ended it) and nil
// when the finish was confirmed. A signal (or ctx) ending the build gives an
// *InterruptedError. No process of the command's group outlives Run.
func (g *Guard) Run(ctx context.Context, argv []string) (int, error) {
	c := g.cfg
	if len(argv) == 0 {
		return 0, refused(FixNone, "no command given")
	}
	if err := cycle.Finite(argv); err != nil {
		return 0, fmt.Errorf("%w: %w", ErrInvalidOption, err) // docs/decisions.md#D20
	}
	g.announce()
	transcript, err := g.check()
	if err != nil {
		return 0, err
	}
	if transcript != nil {
		defer transcript.Close()
		c.Transcript = transcript
	}
	go warmStart()
	sigs := g.catchSignals()
	defer sigs.release()

	env, release, sig, err := g.admit(ctx, sigs)
	if release != nil {
		defer release()
	}
	switch {
	case sig != nil:
		return 0, &InterruptedError{Signal: sig}
	case err != nil:
		return 0, err
	case env != nil:
		base := c.Env
		if base == nil {
			base = os.Environ()
		}
		c.Env = append(append([]string(nil), base...), env...)
	}

	agent, sig, err := g.acquire(ctx, sigs)
	if agent != nil {
		defer agent.Close()
	}
	switch {
	case sig != nil:
		return 0, &InterruptedError{Signal: sig, Err: err}
	case err != nil:
		return 0, err
	}
	return g.runHeld(ctx, c, agent, sigs, argv)
}

// announce prints the front's owner line, if it has one.
func (g *Guard) announce() {
	if g.cfg.OwnerLine != nil {
		fmt.Fprintln(g.cfg.Stderr, g.cfg.OwnerLine(g.owner))
	}
}

// check reports the refusals found before anything connects: the options'
// own, the timeout's range, a transcript file that cannot be created (else
// it returns that file, for Run to close).
func (g *Guard) check() (*os.File, error) {
	c := g.cfg
	if c.refusal != nil {
		return nil, c.refusal
	}
	if err := checkTimeout(c.Timeout); err != nil {
		return nil, err
	}
	if c.transcriptPath == "" {
		return nil, nil
	}
	f, err := os.OpenFile(c.transcriptPath, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o644)
	if err != nil {
		return nil, refused(FixTranscript, "cannot create the transcript: %w", err)
	}
	return f, nil
}

// newRunner makes the runner of argv with the configured stdio, transcript
// and grace. Ctrl-C typed on a raw terminal (pty mode) arrives on typed,
// not as SIGINT.
func (g *Guard) newRunner(c Config, argv []string) (Runner, <-chan struct{}) {
	typed := make(chan struct{}, 1)
	r := c.NewRunner(Command{
		Argv: argv, Dir: c.Dir, Env: c.Env,
		Stdin: c.Stdin, Stdout: c.Stdout, Stderr: c.Stderr,
		Transcript: c.Transcript, Grace: c.Grace, Logger: g.log.Named("child"),
		Started: c.Started,
		Interrupt: func() {
			select {
			case typed <- struct{}{}:
			default:
			}
		},
	})
	return r, typed
}

// runHeld runs the command under the acknowledged hold: it starts it (or
// says BUILD failed when it cannot, or when a signal came first),
// supervises it, and concludes the session.
func (g *Guard) runHeld(ctx context.Context, c Config, agent Agent, sigs caught, argv []string) (int, error) {
	r, typed := g.newRunner(c, argv)
	defer r.Close()
	// A signal taken after the acknowledgement but before the start still
	// means no command: report the hold failed, as acquire does.
	if s := pendingInterrupt(sigs.c); s != nil {
		g.log.Info("interrupted before the build started", "signal", s)
		ferr := g.finishing(ctx, agent, agentproto.BuildFailed, &interrupts{sigs: sigs.c, first: s})
		var ab *AbandonedError
		if errors.As(ferr, &ab) {
			return 0, &InterruptedError{Signal: s, Err: ab}
		}
		if ferr != nil {
			g.log.Debug("BUILD failed after an interrupted start", "error", ferr)
		}
		return 0, &InterruptedError{Signal: s}
	}
	if err := r.Start(); err != nil {
		r.Close()
		g.log.Warn("the build command could not be started", "error", err)
		in := &interrupts{sigs: sigs.c}
		ferr := g.finishing(ctx, agent, agentproto.BuildFailed, in)
		var ab *AbandonedError
		switch {
		case errors.As(ferr, &ab):
			return 0, &InterruptedError{Signal: in.first, Err: ab}
		case ferr != nil:
			return 1, &UnconfirmedError{State: agentproto.BuildFailed, Err: ferr, Launch: err}
		}
		return 127, err
	}

	stopDraining := g.drain(agent, r)
	in := &interrupts{sigs: sigs.c}
	code, werr := g.superviseInterrupts(ctx, r, in, typed)
	r.Close() // restores the terminal before anything more is printed
	stopDraining()
	g.log.Debug("build exited", "code", code)
	var left *StragglersError
	switch {
	case errors.As(werr, &left):
		g.log.Info("processes of the build were still running after the grace period; killed them", "grace", c.Grace)
	case werr != nil:
		g.log.Error("waiting for the build failed", "error", werr)
	}
	return g.conclude(ctx, agent, code, in, werr)
}

// conclude tells the agent how the command ended — `BUILD ok` only for exit
// 0 with nothing wrong, else `BUILD failed` — and returns the build's code
// and the error that says which promise could not be kept. in holds the
// interrupts of the supervision; a second one, then or while the agent is
// awaited, ends the wait at once (docs/decisions.md#D23).
func (g *Guard) conclude(ctx context.Context, agent Agent, code int, in *interrupts, werr error) (int, error) {
	// Whether ctx ended the build is decided once, with the state sent: a
	// cancellation that arrives while `BUILD ok` is acknowledged did not end
	// this build, the agent released its output (docs/decisions.md#D21).
	cancelled := ctx.Err() != nil
	sig := in.first
	state := agentproto.BuildOK
	if code != 0 || sig != nil || werr != nil || cancelled {
		state = agentproto.BuildFailed
	}
	ferr := g.finishing(ctx, agent, state, in)
	var ab *AbandonedError
	if ferr != nil && state == agentproto.BuildOK {
		// After a second interrupt this only sends failed, unawaited.
		if err := g.finishing(ctx, agent, agentproto.BuildFailed, in); err != nil {
			g.log.Debug("best-effort BUILD failed after the lost ok", "error", err)
		}
	}
	if errors.As(ferr, &ab) {
		return code, &InterruptedError{Signal: in.first, Ran: true, Err: ab}
	}
	var unsafe error
	switch {
	case ferr != nil:
		unsafe = &UnconfirmedError{State: state, Err: ferr}
	case werr != nil:
		unsafe = join(": ", ErrUnsafe, werr)
	}
	switch {
	case sig != nil:
		return code, &InterruptedError{Signal: sig, Ran: true, Err: unsafe}
	case cancelled:
		return code, &InterruptedError{Ran: true, Err: join("\n", ctx.Err(), unsafe)}
	case unsafe != nil:
		return 1, unsafe
	}
	return code, nil
}

// caught are the signals one Run reacts to.
type caught struct {
	c <-chan os.Signal
	// ready is closed once the signals are caught: the hold is not asked
	// for before, so that no signal can end the wrapper while it is taken.
	ready   <-chan struct{}
	release func()
}

// catchSignals starts catching the process's signals for one Run (or takes
// Config.Signals, and still catches the quiet ones). Catching takes a
// hand-over with the runtime's signal thread per signal, a few hundred
// microseconds in all, so it runs while the agent is being reached (the
// build's turn in the queue, which a Ctrl-C must be able to end, waits for
// it); a signal before that is done ends the wrapper as it would before
// Run, with nothing held yet. release waits for the catch and undoes it, unless
// KeepSignals is set.
func (g *Guard) catchSignals() caught {
	ready := make(chan struct{})
	ch := g.cfg.Signals
	var own chan os.Signal
	if ch == nil {
		own = make(chan os.Signal, 8)
		ch = own
	}
	quiet := make(chan os.Signal, 1)
	go func() {
		defer close(ready)
		if len(quietSignals) > 0 {
			signal.Notify(quiet, quietSignals...)
		}
		if own != nil {
			signal.Notify(own, caughtSignals()...)
		}
	}()
	return caught{c: ch, ready: ready, release: func() {
		if g.cfg.KeepSignals {
			return
		}
		<-ready
		if own != nil {
			signal.Stop(own)
		}
		signal.Stop(quiet)
	}}
}

// caughtKey is the key of the channel SignalsCaught returns in the
// context of Config.Admit.
type caughtKey struct{}

// SignalsCaught returns, in the context Run gives Config.Admit, a channel
// closed once the process's signals are caught: an Admit that tells the
// user it waits does so only then (Config.Admit). In any other context the
// channel is closed.
func SignalsCaught(ctx context.Context) <-chan struct{} {
	if c, ok := ctx.Value(caughtKey{}).(<-chan struct{}); ok {
		return c
	}
	c := make(chan struct{})
	close(c)
	return c
}

// pendingInterrupt returns the first interrupting signal already delivered
// on sigs, without waiting; other signals (a resize) are dropped.
func pendingInterrupt(sigs <-chan os.Signal) os.Signal {
	for {
		select {
		case s := <-sigs:
			if isInterrupt(s) {
				return s
			}
		default:
			return nil
		}
	}
}

// admit waits for the build's turn with Config.Admit; an interrupting
// signal ends the wait and is returned instead of an error. The turn is
// taken while the signals are being caught: an interrupt before the catch
// ends the process, as one before Run does, with nothing held (the queue's
// files are crash-safe, docs/decisions.md#D18), and the catch is done
// before anything is asked of the agent (connect). Only in a process
// started with SIGINT ignored (a background job, nohup) is a SIGINT before
// the catch dropped instead; there the wait starts once the signals are
// caught, as a build told it is queued must hear the Ctrl-C that follows.
func (g *Guard) admit(ctx context.Context, sigs caught) (env []string, release func(), sig os.Signal, err error) {
	if g.cfg.Admit == nil {
		return nil, nil, nil, nil
	}
	if signal.Ignored(os.Interrupt) {
		<-sigs.ready
	}
	actx, cancel := context.WithCancel(context.WithValue(ctx, caughtKey{}, sigs.ready))
	defer cancel()
	stop, done := make(chan struct{}), make(chan struct{})
	got := make(chan os.Signal, 1)
	go func() {
		defer close(done)
		for {
			select {
			case s := <-sigs.c:
				if isInterrupt(s) {
					got <- s
					cancel()
					return
				}
			case <-stop:
				return
			}
		}
	}()
	env, release, err = g.cfg.Admit(actx)
	close(stop)
	<-done
	select {
	case s := <-got:
		g.log.Info("interrupted while waiting for the build's turn", "signal", s)
		if release != nil {
			release()
		}
		return nil, nil, s, nil
	default:
	}
	if err != nil {
		if ctx.Err() != nil {
			return nil, nil, nil, &RefusalError{Problem: ctx.Err()}
		}
		return nil, nil, nil, &RefusalError{Stage: "Cannot take a turn in the project's build queue", Problem: err}
	}
	return env, release, nil, nil
}

// acquire connects and takes the hold. A signal (or ctx) before the hold is
// acknowledged cancels it and is returned instead of an error, or with an
// *AbandonedError when a second one ended the wait for the BUILD failed
// that follows. Once
// `BUILD started` was sent, every way out that does not start the command
// sends `BUILD failed` (docs/decisions.md#D21): the agent may have taken the
// hold although its acknowledgement never arrived, and must not be left
// holding for a build that never ran. Only a rejection needs no failed: the
// agent changed nothing.
func (g *Guard) acquire(ctx context.Context, sigs caught) (Agent, os.Signal, error) {
	return g.open(ctx, sigs, true)
}

// open connects, and with hold takes the hold, as acquire says; without
// hold it only connects (nothing is owed to the agent then).
func (g *Guard) open(ctx context.Context, sigs caught, hold bool) (Agent, os.Signal, error) {
	actx, cancel := context.WithCancel(ctx)
	defer cancel()
	var got os.Signal
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			select {
			case s := <-sigs.c:
				if !isInterrupt(s) {
					continue
				}
				got = s
				cancel()
				return
			case <-stop:
				return
			}
		}
	}()
	var (
		agent Agent
		sent  bool
		err   *RefusalError
	)
	if hold {
		agent, sent, err = g.connectAndStart(actx, sigs.ready)
	} else {
		agent, err = g.connect(actx, sigs.ready)
	}
	close(stop)
	wg.Wait()
	if err == nil && got == nil && ctx.Err() != nil {
		err = &RefusalError{Problem: ctx.Err()}
	}
	if got == nil && err == nil {
		return agent, nil, nil
	}
	var ferr error
	owed := sent && (err == nil || !errors.Is(err.Problem, agentproto.ErrRejected))
	if owed {
		in := &interrupts{sigs: sigs.c, first: got}
		ferr = g.finishing(ctx, agent, agentproto.BuildFailed, in)
		var ab *AbandonedError
		if errors.As(ferr, &ab) {
			g.log.Info("interrupted twice before the build started", "signal", ab.Signal)
			return agent, in.first, ab
		}
	}
	if got != nil {
		g.log.Info("interrupted before the build started", "signal", got)
		if ferr != nil {
			g.log.Debug("BUILD failed after an interrupted start", "error", ferr)
		}
		return agent, got, nil
	}
	switch {
	case !owed:
	case ferr == nil:
		err.After = "then BUILD failed was acknowledged: if the agent took the hold after all, it keeps it for this owner until this owner's next successful build"
	default:
		err.After = fmt.Sprintf("then BUILD failed was not acknowledged either (%v): if the agent took the hold, it keeps it for this owner until this owner's next successful build", ferr)
	}
	return agent, nil, err
}

// connectAndStart connects and asks for the hold; sent reports whether
// `BUILD started` was handed to the connection, so that the agent may have
// taken the hold whatever the error says.
func (g *Guard) connectAndStart(ctx context.Context, caught <-chan struct{}) (agent Agent, sent bool, refusal *RefusalError) {
	agent, refusal = g.connect(ctx, caught)
	if refusal != nil {
		return agent, false, refusal
	}
	err := g.startHold(ctx, func() error {
		sctx, cancel := context.WithTimeout(ctx, g.cfg.Timeout)
		defer cancel()
		return agent.Build(sctx, agentproto.BuildStarted, g.owner)
	})
	if err != nil {
		g.log.Debug("BUILD started failed", "error", err, "cause", agentproto.Cause(err))
		return agent, true, refusedStart(err)
	}
	g.log.Debug("hold acknowledged")
	return agent, true, nil
}

// connect resolves the endpoint, connects and reads the handshake, and then
// waits until the signals are caught (or ctx ends): no hold is asked for
// before.
func (g *Guard) connect(ctx context.Context, caught <-chan struct{}) (Agent, *RefusalError) {
	port, err := g.cfg.Endpoint.Resolve()
	if err != nil {
		return nil, refusedEndpoint(g.cfg.Endpoint, err)
	}
	agent, err := g.cfg.Dial(ctx, port)
	if err != nil {
		g.log.Debug("connecting to the agent failed", "port", port, "error", err, "cause", agentproto.Cause(err))
		fix := FixStartAgent
		if errors.Is(err, agentproto.ErrInvalidHandshake) {
			fix = FixNotAgent
		}
		return nil, &RefusalError{Stage: "Cannot open build session", Problem: err, Fix: fix}
	}
	g.log.Debug("connected to the agent", "port", port)
	select {
	case <-caught:
	case <-ctx.Done():
		return agent, &RefusalError{Problem: ctx.Err()}
	}
	if ctx.Err() != nil {
		return agent, &RefusalError{Problem: ctx.Err()}
	}
	return agent, nil
}

// finish sends the final state and waits for its acknowledgement, even when
// ctx was cancelled (the agent must hear how the build ended).
func (g *Guard) finish(ctx context.Context, agent Agent, state string) error {
	fctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), g.cfg.Timeout)
	defer cancel()
	err := agent.Build(fctx, state, g.owner)
	if err != nil {
		g.log.Debug("BUILD finish not acknowledged", "state", state, "error", err, "cause", agentproto.Cause(err))
		return err
	}
	g.log.Debug("finish acknowledged", "state", state)
	return nil
}

// interrupts are the interrupting signals of one part of a Run: first is the
// one that ended the build, second the one that ends every wait after it
// at once (docs/decisions.md#D23).
type interrupts struct {
	sigs          <-chan os.Signal
	first, second os.Signal
}

// take records an interrupting signal s and reports whether it is the
// second.
func (in *interrupts) take(s os.Signal) bool {
	if in.first == nil {
		in.first = s
		return false
	}
	if in.second == nil {
		in.second = s
	}
	return true
}

// sender is an Agent that can send a BUILD state and await its answer
// separately (*agentproto.Conn is one), so that a wait it stops is known to
// have sent the state.
type sender interface {
	SendBuild(ctx context.Context, state, owner string) (wait func(context.Context) error, err error)
}

// finishing is finish while in's signals are watched: once an interrupt has
// ended the build, the wait is announced (Config.WaitLine) and the next
// interrupt ends it at once with an *AbandonedError; after a second
// interrupt the state is only sent, not awaited. An Agent that is no sender
// is awaited until the next interrupt.
func (g *Guard) finishing(ctx context.Context, agent Agent, state string, in *interrupts) error {
	fctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), g.cfg.Timeout)
	defer cancel()
	send := func() (func(context.Context) error, error) {
		return func(c context.Context) error { return agent.Build(c, state, g.owner) }, nil
	}
	s, canSend := agent.(sender)
	if canSend {
		send = func() (func(context.Context) error, error) { return s.SendBuild(fctx, state, g.owner) }
	}
	if in.second != nil && canSend {
		_, err := send()
		return &AbandonedError{Signal: in.second, State: state, Sent: err == nil}
	}
	wait, err := send()
	if err != nil {
		g.log.Debug("BUILD finish not sent", "state", state, "error", err, "cause", agentproto.Cause(err))
		return err
	}
	if in.first != nil {
		g.sayWaiting(state)
	}
	done := make(chan error, 1)
	go func() { done <- wait(fctx) }()
	for {
		select {
		case err := <-done:
			if err != nil {
				g.log.Debug("BUILD finish not acknowledged", "state", state, "error", err, "cause", agentproto.Cause(err))
				return err
			}
			g.log.Debug("finish acknowledged", "state", state)
			return nil
		case sig := <-in.sigs:
			if !isInterrupt(sig) {
				continue
			}
			if !in.take(sig) {
				g.sayWaiting(state)
				continue
			}
			cancel()
			<-done
			return &AbandonedError{Signal: sig, State: state, Sent: canSend}
		}
	}
}

// sayWaiting prints the front's line for a wait for the acknowledgement of
// state after an interrupt, if it has one.
func (g *Guard) sayWaiting(state string) {
	if g.cfg.WaitLine != nil {
		fmt.Fprintln(g.cfg.Stderr, g.cfg.WaitLine(Wait{State: state, Limit: g.cfg.Timeout}))
	}
}

// drainer is an Agent that can read and drop the agent's broadcasts while
// nothing is awaited (*agentproto.Conn is one).
type drainer interface {
	Discard(ctx context.Context) error
}

// drain keeps reading the agent's connection while the command runs, so that
// hours of broadcasts cannot fill the agent's bounded outbox for it and
// crowd out the finish acknowledgement. The returned function stops reading
// and waits until it has stopped; the connection is then ready for the finish.
// A panic while reading closes r, as one in Run itself would.
func (g *Guard) drain(agent Agent, r Runner) (stop func()) {
	d, ok := agent.(drainer)
	if !ok {
		return func() {}
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		defer cleanUpOnPanic(func() { r.Close() })
		if err := d.Discard(ctx); err != nil {
			g.log.Warn("the agent connection failed while the build ran; its finish cannot be confirmed", "error", err)
		}
	}()
	return func() {
		cancel()
		<-done
	}
}

// supervise waits for the command while reacting to signals, to the
// interrupt character typed on a raw terminal (as SIGINT) and to ctx: the
// first interruption is forwarded to the command's process group and starts
// the grace period, after which the group is killed; a second interrupt
// kills it at once.
func (g *Guard) supervise(ctx context.Context, r Runner, sigs <-chan os.Signal, typed <-chan struct{}) (int, os.Signal, error) {
	in := &interrupts{sigs: sigs}
	code, err := g.superviseInterrupts(ctx, r, in, typed)
	return code, in.first, err
}

// superviseInterrupts is supervise recording the interrupts in in: a second
// one kills the command's process group at once instead of waiting out the
// grace period (docs/decisions.md#D23).
func (g *Guard) superviseInterrupts(ctx context.Context, r Runner, in *interrupts, typed <-chan struct{}) (int, error) {
	type result struct {
		code int
		err  error
	}
	done := make(chan result, 1)
	go func() {
		defer cleanUpOnPanic(func() { r.Close() })
		code, err := r.Wait()
		done <- result{code, err}
	}()
	var (
		grace     <-chan time.Time
		timer     *time.Timer
		ctxDone   = ctx.Done()
		interrupt = func(forward os.Signal) {
			if err := r.Signal(forward); err != nil {
				g.log.Warn("forwarding the signal failed", "signal", forward, "error", err)
			}
			if timer != nil {
				return
			}
			if g.cfg.Grace < 0 {
				_ = r.Kill()
				timer = time.NewTimer(0) // marks the grace period as begun
				return
			}
			timer = time.NewTimer(g.cfg.Grace)
			grace = timer.C
		}
	)
	defer func() {
		if timer != nil {
			timer.Stop()
		}
	}()
	taken := func(s os.Signal) {
		if !in.take(s) {
			g.log.Info("forwarding the interrupt to the build", "signal", s)
			interrupt(s)
			return
		}
		g.log.Info("interrupted again; killing the build now", "signal", s)
		grace = nil
		if err := r.Kill(); err != nil {
			g.log.Warn("killing the build failed", "error", err)
		}
	}
	for {
		select {
		case res := <-done:
			return res.code, res.err
		case s := <-in.sigs:
			if isResize(s) {
				if err := r.Resize(); err != nil {
					g.log.Debug("resizing the build's terminal failed", "error", err)
				}
			}
			if isInterrupt(s) {
				taken(s)
			}
		case <-typed:
			taken(os.Interrupt) // the interrupt key of a raw terminal
		case <-ctxDone:
			ctxDone = nil
			g.log.Info("cancelled; stopping the build")
			interrupt(terminateSignal)
		case <-grace:
			grace = nil
			g.log.Warn("the build did not stop within the grace period; killing it", "grace", g.cfg.Grace)
			if err := r.Kill(); err != nil {
				g.log.Warn("killing the build failed", "error", err)
			}
		}
	}
}
