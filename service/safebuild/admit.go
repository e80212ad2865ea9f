package safebuild

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/buildguard/buildguard/agentproto"
	"github.com/buildguard/buildguard/buildguard"
	"github.com/buildguard/buildguard/service/buildqueue"
)

// QueueHeartbeat is how often a waiting build repeats where it stands when
// nothing changed, so a host that resets its timeout on progress keeps
// waiting (docs/safe-build.md#5).
const QueueHeartbeat = 10 * time.Second

// queueFront is how the builds behind a safe build see where it came from.
const queueFront = "safe build"

// admission is the first stage of a safe build (Run): everything before its
// command starts. A build is admitted when it is not nested in another
// safe build, the server still takes builds, its turn in the project's
// build queue came (docs/decisions.md#D18), and its owner token and a new
// log are ready in the project's state directory (statedir.go): it then
// has the hold session that runs it (guard). Otherwise denied says why
// not, and err what went wrong; nothing ran and no hold was taken.
type admission struct {
	b    *Builder
	req  Request
	sctx context.Context         // the call's context, also cancelled by Stop (errStopping)
	stop context.CancelCauseFunc // cancels sctx
	slot *running                // the build's place among the server's builds

	denied denial
	err    error

	// the build's turn in the project's queue
	turn         *buildqueue.Turn
	joined       []byte // the result the identical build this call joined left
	stopping     bool   // the wait ended because the server is stopping
	place        int    // the last place in the queue reported
	queueTimeout time.Duration
	waited       time.Duration // how long it waited for its turn
	ahead        int           // the builds ahead of it when it arrived
	outlived     string        // what it ended of an earlier build (Turn.OutlivedNote)

	// what the admitted build runs with
	timeout time.Duration      // its time limit (buildTimeout), set on arrival
	bctx    context.Context    // sctx within timeout (errBuildTimeout)
	cancel  context.CancelFunc // cancels bctx
	owner   *string            // the owner the hold is asked for
	attempt *attempt
	guard   *buildguard.Guard
}

// denial is why a build was not admitted.
type denial int

const (
	admitted       denial = iota
	deniedNested          // inside another safe build (ActiveEnv)
	deniedStopping        // the Builder was stopped
	deniedJoined          // joined an identical waiting build: joined is its result
	deniedQueue           // no turn in the queue: err
	deniedOwner           // the project's owner token: err
	deniedLog             // the build's log: err
	deniedGuard           // the hold session: err
)

// admit admits the build of req: refuses a nested build, claims a place
// among the server's builds (Stop ends them all), waits for the build's
// turn in the project's queue, then readies its owner, its log and its
// hold session. ctx is the call's context. close releases what it holds.
func (b *Builder) admit(ctx context.Context, req Request) *admission {
	sctx, stop := context.WithCancelCause(ctx)
	a := &admission{b: b, req: req, sctx: sctx, stop: stop}
	a.timeout = buildTimeout(req)
	if _, nested := os.LookupEnv(ActiveEnv); nested {
		a.denied = deniedNested
		return a
	}
	var stopped bool
	if a.slot, stopped = b.claim(stop); stopped {
		a.denied = deniedStopping
		return a
	}
	if a.wait(ctx, sctx); a.denied == admitted {
		a.ready(sctx)
	}
	return a
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

// wait waits for the build's turn in the project's queue
// (docs/decisions.md#D18). It ends with the turn; or with the result the
// identical build the call joined instead of running left; or in err
// with why there is none (nothing ran, no hold was taken). ctx is the
// call's context, sctx the one Stop cancels too.
func (a *admission) wait(ctx, sctx context.Context) {
	a.queueTimeout = a.req.Build.QueueTimeout
	if a.queueTimeout == 0 {
		a.queueTimeout = a.timeout
	}
	qreq := buildqueue.Request{
		Project:   a.req.Dir,
		Name:      a.req.Build.Name,
		Front:     queueFront,
		Key:       a.b.coalesceKey(a.req, a.timeout),
		Timeout:   a.queueTimeout,
		Heartbeat: QueueHeartbeat,
		Grace:     a.b.cfg.Grace,
		Report: func(s buildqueue.Status) {
			a.place = s.Place
			if a.req.Queued != nil {
				a.req.Queued(s.String())
			}
		},
	}
	a.turn, a.err = a.b.cfg.Queue.Wait(sctx, qreq)
	a.stopping = errors.Is(context.Cause(sctx), errStopping) && ctx.Err() == nil
	if a.err != nil {
		a.denied = deniedQueue
		return
	}
	if data, ok := a.turn.Joined(); ok {
		a.denied, a.joined = deniedJoined, data
		return
	}
	a.waited, a.ahead, a.outlived = a.turn.Waited(), a.turn.Ahead(), a.turn.OutlivedNote()
	a.req.turnEnv, a.req.started = a.turn.Env(), a.turn.Started
}

// coalesceKey is what makes two safe builds of a project the same build
// (docs/decisions.md#D22): the same project directory, which is the
// command's working directory and the home of its log and owner; the same
// build (name, command, time limit, log cap); the same environment of the
// command; the same agent (the endpoint as given and the port it selects
// now) and project gate; and the same owner. Builds whose agent or owner
// cannot be found never join: "". The owner is read from the project's
// state directory before the endpoint is resolved.
func (b *Builder) coalesceKey(req Request, timeout time.Duration) string {
	env := b.env()
	owner, err := projectOwner(req.Dir)
	if err != nil {
		return ""
	}
	port, err := req.Endpoint.Resolve()
	if err != nil {
		return ""
	}
	data, err := json.Marshal(struct {
		Dir, Name, Confirm, Owner string
		Command, Env              []string
		Timeout                   time.Duration
		MaxLogBytes               int64
		Endpoint                  agentproto.Endpoint
		Port                      int
	}{
		Dir: filepath.Clean(req.Dir), Name: req.Build.Name, Confirm: req.Confirm, Owner: owner,
		Command: req.Build.Command, Env: env,
		Timeout: timeout, MaxLogBytes: req.Build.MaxLogBytes,
		Endpoint: req.Endpoint, Port: port,
	})
	if err != nil {
		return ""
	}
	sum := sha256.Sum256(data)
	return hex.EncodeToString(sum[:16])
}

// ready readies the build that has its turn, within sctx: its context
// within its time limit and its hold session's configuration, then its
// owner and its log from the project's state directory (readyState), the
// log created before anything is asked of the agent so that a log folder
// that cannot be written refuses the build with nothing held
// (docs/safe-build.md#9), and last its hold session.
func (a *admission) ready(sctx context.Context) {
	a.bctx, a.cancel = context.WithTimeoutCause(sctx, a.timeout, errBuildTimeout)
	a.attempt = &attempt{b: a.b, req: a.req, ctx: a.bctx}
	cfg := a.b.guardConfig(a.req, a.attempt)
	owner, f, err := readyState(a.req.Dir, a.req.Build.Name, time.Now())
	var logErr *logError
	switch {
	case errors.As(err, &logErr):
		a.denied, a.err = deniedLog, logErr.err
		return
	case err != nil:
		a.denied, a.err = deniedOwner, err
		return
	}
	a.attempt.logFile, a.attempt.logPath = f, f.Name()
	if a.req.LogStarted != nil {
		a.req.LogStarted(f.Name())
	}
	a.owner, cfg.Owner = &owner, owner
	if a.guard, err = buildguard.New(cfg); err != nil { // only an invalid owner, which readyState never returns
		a.denied, a.err = deniedGuard, err
	}
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

func (b *Builder) env() []string {
	if b.cfg.Env != nil {
		return b.cfg.Env
	}
	return os.Environ()
}

// close releases what the admission holds, once the build's answer res
// is known (nil when there is none): the attempt's files and connections,
// the build's context, the turn (leaving res to the builds that joined
// this one), the place among the server's builds.
func (a *admission) close(res *Result) {
	if a.attempt != nil {
		a.attempt.close()
	}
	if a.cancel != nil {
		a.cancel()
	}
	if a.turn != nil && a.denied != deniedQueue && a.denied != deniedJoined {
		a.turn.Release(shareable(res))
	}
	if a.slot != nil {
		a.b.release(a.slot)
	}
	a.stop(nil)
}

// shareable is res as the builds that joined this one get it, or nil when
// they must not take it as theirs: a build cancelled for its own caller
// says nothing about theirs, so they run a build of their own.
func shareable(res *Result) []byte {
	if res == nil || res.Outcome == OutcomeCancelled {
		return nil
	}
	data, err := res.JSON()
	if err != nil {
		return nil
	}
	return data
}
