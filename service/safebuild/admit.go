package safebuild

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"time"

	"github.com/buildguard/buildguard/agentproto"
	"github.com/buildguard/buildguard/service/buildqueue"
)

// QueueHeartbeat is how often a waiting build repeats where it stands when
// nothing changed, so a host that resets its timeout on progress keeps
// waiting (docs/safe-build.md#5).
const QueueHeartbeat = 10 * time.Second

// queueFront is how the builds behind a safe build see where it came from.
const queueFront = "safe build"

// admission is the first stage of a safe build (Run): everything until
// the build's turn. A build is admitted when it is not nested in another
// safe build, the server still takes builds, and its turn in the
// project's build queue came (docs/decisions.md#D18). Otherwise denied
// says why not, and err what went wrong; nothing ran and no hold was
// taken.
type admission struct {
	b    *Builder
	req  Request
	sctx context.Context         // the call's context, also cancelled by Stop (errStopping)
	stop context.CancelCauseFunc // cancels sctx
	slot *running                // the build's place among the server's builds

	denied denial
	err    error

	timeout time.Duration // the build's time limit (buildTimeout), set on arrival

	// the build's turn in the project's queue
	turn         *buildqueue.Turn
	joined       []byte // the result the identical build this call joined left
	stopping     bool   // the wait ended because the server is stopping
	place        int    // the last place in the queue reported
	queueTimeout time.Duration
	waited       time.Duration // how long it waited for its turn
	ahead        int           // the builds ahead of it when it arrived
	outlived     string        // what it ended of an earlier build (Turn.OutlivedNote)
}

// denial is why a build was not admitted.
type denial int

const (
	admitted       denial = iota
	deniedNested          // inside another safe build (ActiveEnv)
	deniedStopping        // the Builder was stopped
	deniedJoined          // joined an identical waiting build: joined is its result
	deniedQueue           // no turn in the queue: err
)

// admit admits the build of req: refuses a nested build, claims a place
// among the server's builds (Stop ends them all) and waits for the
// build's turn in the project's queue. ctx is the call's context. close
// releases what it holds.
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
	a.wait(ctx, sctx)
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

// close releases what the admission holds, once the build's answer res
// is known (nil when there is none): the turn (leaving res to the builds
// that joined this one), the place among the server's builds.
func (a *admission) close(res *Result) {
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
