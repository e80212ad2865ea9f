package safebuild

import (
	"context"
	"fmt"
	"strings"

	"github.com/buildguard/buildguard/agentproto"
)

// The proof of the bytes (docs/safe-build.md#8), in three steps of one
// attempt: searchBefore (before the hold), searchAfter (right after the
// command exited 0, before BUILD ok) and prove (after BUILD ok was
// acknowledged).

// searchBefore asks the agent on conn for its watched directories (DOCTOR)
// and notes their class files, within ctx.
func (a *attempt) searchBefore(ctx context.Context, conn *agentproto.Conn) {
	d, err := a.doctor(ctx, conn)
	a.search.addDoctor(d, err)
	a.knownBefore = err == nil && d.Status == agentproto.DoctorObserved
	sctx, cancel := context.WithTimeout(ctx, a.b.cfg.VerifyWait)
	defer cancel()
	a.before = scan(sctx, a.search.dirs)
}

func (a *attempt) doctor(ctx context.Context, conn *agentproto.Conn) (*agentproto.Doctor, error) {
	dctx, cancel := context.WithTimeout(ctx, a.b.cfg.AgentTimeout)
	defer cancel()
	d, err := conn.Doctor(dctx)
	if err != nil {
		a.b.log.Debug("DOCTOR failed; changed classes may be missed", "error", err)
	}
	return d, err
}

// searchAfter runs once the command exited 0 and while the agent still
// holds: on a connection of its own it asks DOCTOR again (the build may
// have created directories the agent now watches), scans every watched
// directory and hashes the changed class files, all within the build's
// context. The connection is kept for the verification.
func (a *attempt) searchAfter() {
	ctx := a.ctx
	a.after = true
	port, err := a.req.Endpoint.Resolve()
	if err == nil {
		a.proof, err = a.b.open(ctx, port, a.req.Confirm)
	}
	switch {
	case !a.knownBefore:
		// Without the directories before the build, what it changed cannot
		// be told; the search is incomplete already.
	case err != nil:
		a.search.problem("the agent could not be asked for its watched directories after the build (%v)", err)
	default:
		d, err := a.doctor(ctx, a.proof)
		if err != nil {
			a.search.problem("the agent's DOCTOR evidence after the build could not be read (%v), so directories the build created may be missed", err)
		} else {
			a.search.addDoctor(d, nil)
		}
	}
	// The search has a budget of its own: a slow or huge directory makes
	// the proof incomplete, never the build late.
	sctx, cancel := context.WithTimeout(ctx, a.b.cfg.VerifyWait)
	defer cancel()
	after := scan(sctx, a.search.dirs)
	a.changed = changes(sctx, a.before, after)
	for _, p := range append(a.before.problems, after.problems...) {
		a.search.problem("%s", p)
	}
}

// prove verifies the changed class files against the agent after BUILD ok
// was acknowledged, and says in res what was proven (docs/decisions.md#D21).
func (b *Builder) prove(ctx context.Context, a *attempt, res *Result) {
	if !a.after {
		a.search.problem("the class files were not searched after the build")
	}
	cc := ChangedClasses{Count: len(a.changed), Complete: len(a.search.problems) == 0, Classes: []ClassReceipt{}}
	if len(a.changed) > 0 {
		vctx, cancel := context.WithTimeout(ctx, b.cfg.VerifyWait)
		defer cancel()
		if a.proof == nil {
			for _, f := range a.changed[:min(len(a.changed), MaxChangedClasses)] {
				cc.Classes = append(cc.Classes, ClassReceipt{ClassName: f.class, SHA256: f.sum, Status: "unavailable",
					Detail: "no verification session: the agent could not be reached after the build"})
			}
		} else {
			cc.Classes = verifyClasses(vctx, a.proof, a.changed)
		}
	}
	applied := 0
	for _, r := range cc.Classes {
		if r.Status == agentproto.ReceiptApplied {
			applied++
		}
	}
	cc.AllApplied = cc.Complete && applied == cc.Count
	res.ChangedClasses = cc
	res.Detail += proofDetail(cc, applied, a.search.problems)
}

// proofDetail says what the proof showed and, when allApplied is false,
// every reason.
func proofDetail(cc ChangedClasses, applied int, problems []string) string {
	switch {
	case cc.AllApplied && cc.Count == 0:
		return "; no class file in the watched directories changed (all of them were searched)"
	case cc.AllApplied:
		return fmt.Sprintf("; all %d changed classes are applied with the built bytes", cc.Count)
	}
	var why []string
	if !cc.Complete {
		why = append(why, "the search for changed classes was incomplete: "+strings.Join(problems, "; "))
	}
	if len(cc.Classes) < cc.Count {
		why = append(why, fmt.Sprintf("only the first %d of %d changed classes were verified", len(cc.Classes), cc.Count))
	}
	if applied < len(cc.Classes) {
		why = append(why, fmt.Sprintf("%d of the %d classes listed are not applied with the built bytes: see changedClasses (reclazz_diagnose explains one class)", len(cc.Classes)-applied, len(cc.Classes)))
	}
	return "; changedClasses.allApplied is false, the bytes are not proven live: " + strings.Join(why, "; ")
}
