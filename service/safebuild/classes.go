package safebuild

import (
	"context"
	"errors"
	"time"

	"github.com/buildguard/buildguard/agentproto"
)

// Bounds of changedClasses (docs/safe-build.md#8).
const (
	// MaxChangedClasses is the most classes a result lists; the count says
	// how many changed in all.
	MaxChangedClasses = 64
	// MaxVerifiedClasses is the most classes verified: what an agent keeps
	// receipts for (docs/agent-protocol.md#8). No agent can prove more.
	MaxVerifiedClasses = 512
	// DefaultVerifyWait bounds the wait for the receipts of the changed
	// classes after BUILD ok was acknowledged: the agent captures and
	// reloads asynchronously.
	DefaultVerifyWait = 15 * time.Second
	// verifyPoll is the pause between two VERIFY rounds over the classes
	// whose receipt is not final yet.
	verifyPoll = 20 * time.Millisecond
	// settleRounds is how many rounds in a row, over at least settleTime,
	// must find the agent settled (no hold, nothing pending, no receipt of
	// the build running) before a receipt that is not_observed or mismatch
	// is taken as final: an agent looks settled for a moment between
	// releasing the hold and starting the batch.
	settleRounds = 2
	settleTime   = 50 * time.Millisecond
	// reloadStatusWait bounds one RELOAD status asked during the
	// verification; an agent that does not answer it is not asked again.
	reloadStatusWait = time.Second
)

// ChangedClasses is the proof of the bytes after BUILD ok
// (docs/safe-build.md#8).
type ChangedClasses struct {
	// Count is how many class files were written during the build in the
	// watched directories searched.
	Count int `json:"count"`
	// Complete is false when the search may have missed some: the agent's
	// evidence was unavailable or named only a sample of its directories,
	// or a directory could not be read.
	Complete bool `json:"complete"`
	// AllApplied is true when every class of Count was verified and its
	// receipt is applied with the built bytes.
	AllApplied bool `json:"allApplied"`
	// Classes are at most MaxChangedClasses of the classes verified: those
	// not applied first, then the applied ones, each group by name.
	Classes []ClassReceipt `json:"classes"`
}

// ClassReceipt is one changed class and what the agent says of its bytes.
type ClassReceipt struct {
	// ClassName is the binary class name.
	ClassName string `json:"className"`
	// SHA256 is the hash of the class file as the build left it.
	SHA256 string `json:"sha256"`
	// Status is the VERIFY receipt status (applied, running, failed,
	// unverified, mismatch, not_observed) or unavailable when no valid
	// receipt was read.
	Status string `json:"status"`
	// Detail is the receipt's detail, or why there is none.
	Detail string `json:"detail"`
}

// verifier is the part of *agentproto.Conn the verification uses.
type verifier interface {
	VerifyAll(ctx context.Context, queries []agentproto.VerifyQuery, got func(i int, r *agentproto.Receipt) error) (int, error)
	Reload(ctx context.Context, action string) (*agentproto.ReloadState, error)
}

// errNoReceipt is why a class has no receipt when the verification's time
// ran out: its VERIFY was not answered, or not sent yet (at most
// agentproto's requests in flight are).
var errNoReceipt = errors.New("no receipt came before the verification deadline (its VERIFY not answered or not sent yet)")

// final reports whether a receipt status can no longer change for these
// bytes (docs/agent-protocol.md#8).
func final(status string) bool {
	switch status {
	case agentproto.ReceiptApplied, agentproto.ReceiptFailed, agentproto.ReceiptUnverified:
		return true
	}
	return false
}

// verification is what verifyClasses found.
type verification struct {
	// receipts has one receipt per class verified, in the order asked.
	receipts []ClassReceipt
	// settled counts the not_observed and mismatch receipts taken as
	// final because the agent settled.
	settled int
	// ended says why the verification ended before every receipt was
	// final ("" when it did not): its deadline, or the VERIFY that failed.
	ended string
	// unasked says why no VERIFY was sent ("" when they were): every
	// receipt is then unavailable with that reason.
	unasked string
}

// unasked is the verification of classes no VERIFY could be sent for.
func unasked(classes []changedFile, why string) verification {
	return verification{receipts: unavailable(classes, why), unasked: why}
}

// verifyClasses asks the agent on conn for the receipt of each changed
// file's hash, taken right after the build (searchAfter), in rounds on the
// one connection, all within ctx: each round asks every class whose receipt
// is not final yet (applied, failed and unverified are), then pauses: 5 ms
// after the first round, twice as long after each next, at most
// verifyPoll. running is always asked again; not_observed and mismatch are
// final once settleRounds rounds in a row, over settleTime at least, found
// the agent settled: asked before the round, it held nothing and had
// nothing pending, and no receipt of the round was running, so the build's
// batch ended without these bytes.
// A changed session id (the JVM restarted) or a failed VERIFY ends the
// verification.
func verifyClasses(ctx context.Context, conn verifier, changed []changedFile) verification {
	out := make([]ClassReceipt, len(changed))
	var pending []int
	for i, f := range changed {
		out[i] = ClassReceipt{ClassName: f.class, Status: "unavailable", SHA256: f.sum}
		if f.err != nil {
			out[i].Detail = "the class file could not be read after the build: " + f.err.Error()
			continue
		}
		pending = append(pending, i)
	}
	v := &rounds{conn: conn, changed: changed, out: out, askStatus: true}
	deadline := verification{receipts: out, ended: "the wait for receipts ended before every receipt was final"}
	pause, running := verifyPoll/4, false
	var quietSince time.Time
	for quiet := 0; len(pending) > 0; {
		// While a receipt was running the agent cannot be settled: its
		// RELOAD status, which may wait for the reload, is not asked.
		asked := time.Now()
		settled := !running && v.agentSettled(ctx)
		next, running, err := v.round(ctx, pending)
		switch {
		case err != nil && timedOut(ctx, err):
			return deadline
		case err != nil:
			return verification{receipts: out, ended: "the verification ended at a VERIFY that failed: " + err.Error()}
		}
		if pending = next; len(pending) == 0 {
			break
		}
		if quiet++; !settled || running {
			quiet = 0
		}
		if quiet == 1 {
			quietSince = asked
		}
		if quiet >= settleRounds && time.Since(quietSince) >= settleTime {
			return verification{receipts: out, settled: len(pending)}
		}
		t := time.NewTimer(pause)
		pause = min(2*pause, verifyPoll)
		select {
		case <-t.C:
		case <-ctx.Done():
			t.Stop()
			v.expire(pending)
			return deadline
		}
	}
	return verification{receipts: out}
}

// rounds is the state of one verification.
type rounds struct {
	conn      verifier
	changed   []changedFile
	out       []ClassReceipt
	answered  []bool
	session   string
	askStatus bool // RELOAD status is answered
}

// agentSettled asks RELOAD status and reports whether the agent holds no
// build and has no class pending. An agent that does not answer is not
// asked again, and is never settled.
func (v *rounds) agentSettled(ctx context.Context) bool {
	if !v.askStatus {
		return false
	}
	sctx, cancel := context.WithTimeout(ctx, reloadStatusWait)
	defer cancel()
	st, err := v.conn.Reload(sctx, agentproto.ReloadStatus)
	if err != nil {
		v.askStatus = false
		return false
	}
	return st.BuildHold == "none" && st.PendingClasses == 0 && !st.Paused
}

// round asks VERIFY once for each class of pending, on the one connection
// with several requests in flight (agentproto.Conn.VerifyAll), and returns
// those whose receipt is not final, and whether one was running. It
// returns an error when the verification ends: ctx ended, a VERIFY failed,
// or the session changed; the receipts say why.
func (v *rounds) round(ctx context.Context, pending []int) (next []int, running bool, err error) {
	if v.answered == nil {
		v.answered = make([]bool, len(v.out))
	}
	queries := make([]agentproto.VerifyQuery, len(pending))
	for k, i := range pending {
		queries[k] = agentproto.VerifyQuery{Class: v.changed[i].class, SHA256: v.changed[i].sum}
	}
	done := make([]bool, len(pending))
	errSession := errors.New("the agent's session changed: the application restarted during the verification")
	failed, err := v.conn.VerifyAll(ctx, queries, func(k int, rec *agentproto.Receipt) error {
		if v.session != "" && rec.SessionID != v.session {
			return errSession
		}
		i := pending[k]
		v.session, v.answered[i], done[k] = rec.SessionID, true, true
		v.out[i].Status, v.out[i].Detail = rec.Status, rec.Detail
		return nil
	})
	switch {
	case err != nil && timedOut(ctx, err):
		v.expire(pending)
		return nil, false, err
	case err != nil:
		detail := "no valid receipt: " + err.Error()
		if errors.Is(err, errSession) {
			detail = err.Error()
		}
		v.out[pending[failed]].Status, v.out[pending[failed]].Detail = "unavailable", detail
		for k, i := range pending {
			if !done[k] && k != failed {
				v.out[i].Status, v.out[i].Detail = "unavailable", "no receipt read: an earlier VERIFY failed ("+err.Error()+")"
			}
		}
		return nil, false, err
	}
	for _, i := range pending {
		if s := v.out[i].Status; !final(s) {
			next = append(next, i)
			running = running || s == agentproto.ReceiptRunning
		}
	}
	return next, running, nil
}

// expire marks the classes of pending never answered as not answered
// before the deadline; the others keep their last receipt.
func (v *rounds) expire(pending []int) {
	for _, i := range pending {
		if v.answered == nil || !v.answered[i] {
			v.out[i].Status = "unavailable"
			v.out[i].Detail = errNoReceipt.Error()
		}
	}
}

// timedOut reports whether err ended a VERIFY because ctx ended: the
// connection's deadline is ctx's, and can pass just before ctx reports it.
func timedOut(ctx context.Context, err error) bool {
	return ctx.Err() != nil || errors.Is(err, agentproto.ErrTimeout)
}
