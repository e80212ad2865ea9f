package safebuild

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
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

// admission is a build's turn in its project's queue, or why it has none.
type admission struct {
	*buildqueue.Turn
	err      error
	stopping bool
	timeout  time.Duration
	place    int
}

// admit waits for the build's turn in the project's queue
// (docs/decisions.md#D18). It returns the result of the identical build
// the call joined instead of running, when it joined one; else the turn,
// or in admission.err why there is none (nothing ran, no hold was taken).
// ctx is the call's context, sctx the one Stop cancels.
func (b *Builder) admit(ctx, sctx context.Context, req Request) (admission, *Result) {
	a := admission{timeout: req.Build.QueueTimeout}
	if a.timeout == 0 {
		a.timeout = buildTimeout(req)
	}
	qreq := buildqueue.Request{
		Project:   req.Dir,
		Name:      req.Build.Name,
		Front:     queueFront,
		Key:       b.coalesceKey(req),
		Timeout:   a.timeout,
		Heartbeat: QueueHeartbeat,
		Grace:     b.cfg.Grace,
		Report: func(s buildqueue.Status) {
			a.place = s.Place
			if req.Queued != nil {
				req.Queued(s.String())
			}
		},
	}
	a.Turn, a.err = b.cfg.Queue.Wait(sctx, qreq)
	a.stopping = errors.Is(context.Cause(sctx), errStopping) && ctx.Err() == nil
	if a.err != nil {
		return a, nil
	}
	data, ok := a.Joined()
	if !ok {
		return a, nil
	}
	res := &Result{}
	if err := json.Unmarshal(data, res); err != nil || res.Outcome == "" {
		res = &Result{Build: req.Build.Name, Command: req.Build.Command, ChangedClasses: ChangedClasses{Classes: []ClassReceipt{}}}
		res.refuse("refused: this call joined an identical build that was waiting, and the result it left cannot be read; nothing ran for this call: call again")
	}
	return a, res
}

// coalesceKey is what makes two safe builds of a project the same build
// (docs/decisions.md#D22): the same project directory, which is the
// command's working directory and the home of its log and owner; the same
// build (name, command, time limit, log cap); the same environment of the
// command; the same agent (the endpoint as given and the port it selects
// now) and project gate; and the same owner. Builds whose agent or owner
// cannot be found never join: "".
func (b *Builder) coalesceKey(req Request) string {
	port, err := req.Endpoint.Resolve()
	if err != nil {
		return ""
	}
	owner, err := projectOwner(req.Dir)
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
		Command: req.Build.Command, Env: b.env(),
		Timeout: buildTimeout(req), MaxLogBytes: req.Build.MaxLogBytes,
		Endpoint: req.Endpoint, Port: port,
	})
	if err != nil {
		return ""
	}
	sum := sha256.Sum256(data)
	return hex.EncodeToString(sum[:16])
}

// result fills res for a build that never got its turn.
func (a admission) result(res *Result) *Result {
	var te *buildqueue.TimeoutError
	switch {
	case errors.As(a.err, &te):
		res.Outcome = OutcomeQueuedTimeout
		res.Detail = fmt.Sprintf("the build waited %s in the project's build queue without getting its turn (%s); nothing ran and no hold was taken. Call again later, or raise queueTimeoutSeconds of the build in %s",
			te.Timeout, te.Last, ConfigFile)
	case errors.Is(a.err, context.Canceled), errors.Is(a.err, context.DeadlineExceeded):
		what := "the build was cancelled"
		if a.stopping {
			what = "the build was cancelled because the server is stopping"
		}
		res.Outcome = OutcomeCancelled
		res.Detail = fmt.Sprintf("%s while it waited in the project's build queue (place %d); nothing ran and no hold was taken", what, max(a.place, 1))
	default:
		res.refuse("refused: " + a.err.Error() + "; nothing ran")
	}
	return res
}

// note adds to the detail how long the build waited for its turn, and
// what it ended of an earlier build before it started.
func (a admission) note(res *Result) {
	if n := a.OutlivedNote(); n != "" {
		res.Detail += "; before this build started, " + n
	}
	if n := a.Ahead(); n > 0 || a.Waited() >= time.Second {
		res.Detail += fmt.Sprintf("; it waited %s for its turn in the project's build queue behind %d %s",
			a.Waited().Round(time.Millisecond), n, plural(n, "build", "builds"))
	}
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// shareable is res as the builds that joined this one get it, or nil when
// they must not take it as theirs: a build cancelled for its own caller
// says nothing about theirs, so they run a build of their own.
func shareable(res *Result) []byte {
	if res.Outcome == OutcomeCancelled {
		return nil
	}
	data, err := res.JSON()
	if err != nil {
		return nil
	}
	return data
}
