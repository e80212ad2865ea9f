package safebuild

import (
	"context"
	"errors"
	"sync"

	"github.com/buildguard/buildguard/buildguard"
)

// recorder is the hold session's connection, recording the last BUILD the
// agent was told and how it answered, so that a result states what the
// agent really knows (docs/decisions.md#D21) instead of inferring it from
// the outcome.
type recorder struct {
	buildguard.Agent

	mu   sync.Mutex
	told exchange
}

// exchange is one BUILD sent and its answer.
type exchange struct {
	// state is the BUILD state sent; "" when none was.
	state string
	// err is nil when the agent acknowledged it.
	err error
}

// Build implements buildguard.Agent.
func (r *recorder) Build(ctx context.Context, state, owner string) error {
	r.mu.Lock()
	r.told = exchange{state: state, err: errNoAnswerYet}
	r.mu.Unlock()
	err := r.Agent.Build(ctx, state, owner)
	r.mu.Lock()
	r.told.err = err
	r.mu.Unlock()
	return err
}

// Discard lets the core drain the connection while the command runs, as
// it does for an *agentproto.Conn.
func (r *recorder) Discard(ctx context.Context) error {
	if d, ok := r.Agent.(interface{ Discard(context.Context) error }); ok {
		return d.Discard(ctx)
	}
	<-ctx.Done()
	return nil
}

// Close implements buildguard.Agent; before dial set the connection there
// is nothing to close.
func (r *recorder) Close() error {
	if r.Agent == nil {
		return nil
	}
	return r.Agent.Close()
}

// last returns the last exchange; its state is "" when the agent was never
// asked for anything (or never reached).
func (r *recorder) last() exchange {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.told
}

var errNoAnswerYet = errors.New("no answer yet")
