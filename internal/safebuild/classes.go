package safebuild

import (
	"context"
	"errors"
	"time"

	"github.com/buildguard/buildguard/agentproto"
)

// Bounds of changedClasses (docs/safe-build.md#8).
const (
	// MaxChangedClasses is the most classes a result lists and verifies; the
	// count says how many changed in all.
	MaxChangedClasses = 64
	// DefaultVerifyWait bounds the wait for the receipts of the changed
	// classes after BUILD ok was acknowledged: the agent captures and
	// reloads asynchronously.
	DefaultVerifyWait = 15 * time.Second
	// verifyPoll is the pause between two VERIFY rounds of a class whose
	// reload has not completed yet.
	verifyPoll = 50 * time.Millisecond
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
	// AllApplied is true when every class of Count was listed and its
	// receipt is applied with the built bytes.
	AllApplied bool `json:"allApplied"`
	// Classes are the first MaxChangedClasses by name, each verified.
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

// verifyClasses asks the agent on conn for the receipt of each changed
// file's hash, taken right after the build (searchAfter), polling until it is applied or ends otherwise, all within
// ctx. A changed session id (the JVM restarted) ends the verification.
func verifyClasses(ctx context.Context, conn verifier, changed []changedFile) []ClassReceipt {
	if len(changed) > MaxChangedClasses {
		changed = changed[:MaxChangedClasses]
	}
	out := make([]ClassReceipt, 0, len(changed))
	session := ""
	broken := ""
	for _, f := range changed {
		r := ClassReceipt{ClassName: f.class, Status: "unavailable", SHA256: f.sum}
		if f.err != nil {
			r.Detail = "the class file could not be read after the build: " + f.err.Error()
			out = append(out, r)
			continue
		}
		if broken != "" {
			r.Detail = broken
			out = append(out, r)
			continue
		}
		rec, err := pollReceipt(ctx, conn, f.class, f.sum)
		switch {
		case err != nil:
			r.Detail = "no valid receipt: " + err.Error()
			if !errors.Is(err, errStillRunning) {
				broken = "not queried: an earlier VERIFY failed (" + err.Error() + ")"
			}
		case session != "" && rec.SessionID != session:
			r.Detail = "the agent's session changed: the application restarted during the verification"
			broken = r.Detail
		default:
			session = rec.SessionID
			r.Status, r.Detail = rec.Status, rec.Detail
		}
		out = append(out, r)
	}
	return out
}

// verifier is the part of *agentproto.Conn the verification uses.
type verifier interface {
	Verify(ctx context.Context, class, sha256 string) (*agentproto.Receipt, error)
}

var errStillRunning = errors.New("the reload did not complete before the verification deadline")

// pollReceipt asks VERIFY until the receipt is final: applied, failed or
// unverified. running, mismatch (older bytes still latest) and
// not_observed (not captured yet) are asked again until ctx ends; the last
// of them is returned then.
func pollReceipt(ctx context.Context, conn verifier, class, sum string) (*agentproto.Receipt, error) {
	var last *agentproto.Receipt
	for {
		r, err := conn.Verify(ctx, class, sum)
		if err != nil {
			if last != nil && ctx.Err() != nil {
				return last, nil
			}
			if ctx.Err() != nil {
				return nil, errStillRunning
			}
			return nil, err
		}
		switch r.Status {
		case agentproto.ReceiptApplied, agentproto.ReceiptFailed, agentproto.ReceiptUnverified:
			return r, nil
		}
		last = r
		t := time.NewTimer(verifyPoll)
		select {
		case <-t.C:
		case <-ctx.Done():
			t.Stop()
			return last, nil
		}
	}
}
