package safebuild

import (
	"context"
	"fmt"
	"slices"
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
// was acknowledged, and says in res what was proven (docs/decisions.md#D21):
// the first MaxVerifiedClasses by name are verified, at most
// MaxChangedClasses are listed.
func (b *Builder) prove(ctx context.Context, a *attempt, res *Result) {
	if !a.after {
		a.search.problem("the class files were not searched after the build")
	}
	cc := ChangedClasses{Count: len(a.changed), Complete: len(a.search.problems) == 0}
	checked := a.changed[:min(len(a.changed), MaxVerifiedClasses)]
	var v verification
	switch {
	case len(checked) == 0:
	case a.proof == nil:
		v = unasked(checked, "no verification session: the agent could not be reached after the build")
	case a.search.noVerifier:
		// VERIFY is ignored: nothing could be read until the deadline.
		v = unasked(checked, "the agent's verifier is not wired (DOCTOR verifySupported is false), so it answers no VERIFY")
	default:
		vctx, cancel := context.WithTimeout(ctx, b.cfg.VerifyWait)
		defer cancel()
		v = verifyClasses(vctx, a.proof, checked)
	}
	t := tallyOf(v)
	cc.Classes = listed(v.receipts)
	cc.AllApplied = cc.Complete && t.applied == cc.Count
	res.ChangedClasses = cc
	res.Detail += proofDetail(cc, t, a.search.problems)
}

// unavailable is a receipt of status unavailable for each of files.
func unavailable(files []changedFile, detail string) []ClassReceipt {
	out := make([]ClassReceipt, len(files))
	for i, f := range files {
		out[i] = ClassReceipt{ClassName: f.class, SHA256: f.sum, Status: "unavailable", Detail: detail}
	}
	return out
}

// tally counts the receipts of the classes verified.
type tally struct {
	checked  int            // classes verified, or to be verified when unasked
	unasked  string         // why no VERIFY was sent ("" when they were)
	applied  int            // of them applied with the built bytes
	byStatus map[string]int // the others by status
	settled  int            // not_observed or mismatch, final as the agent settled
	ended    string         // why the verification ended early, if it did
	first    string         // the first and last class verified, by name
	last     string
}

func tallyOf(v verification) tally {
	receipts := v.receipts
	t := tally{checked: len(receipts), unasked: v.unasked, byStatus: map[string]int{}, settled: v.settled, ended: v.ended}
	for _, r := range receipts {
		if r.Status == agentproto.ReceiptApplied {
			t.applied++
		} else {
			t.byStatus[r.Status]++
		}
	}
	if len(receipts) > 0 {
		t.first, t.last = receipts[0].ClassName, receipts[len(receipts)-1].ClassName
	}
	return t
}

// listed is at most MaxChangedClasses of receipts: those not applied
// first, then the applied ones, each group in the order of receipts (by
// name).
func listed(receipts []ClassReceipt) []ClassReceipt {
	out := make([]ClassReceipt, 0, min(len(receipts), MaxChangedClasses))
	for _, applied := range []bool{false, true} {
		for _, r := range receipts {
			if len(out) < MaxChangedClasses && (r.Status == agentproto.ReceiptApplied) == applied {
				out = append(out, r)
			}
		}
	}
	return out
}

// proofDetail says what the proof checked and showed and, when allApplied
// is false, every reason.
func proofDetail(cc ChangedClasses, t tally, problems []string) string {
	switch {
	case cc.AllApplied && cc.Count == 0:
		return "; no class file in the watched directories changed (all of them were searched)"
	case cc.AllApplied:
		return fmt.Sprintf("; all %d changed classes were verified with VERIFY and are applied with the built bytes", cc.Count)
	}
	var why []string
	if !cc.Complete {
		why = append(why, "the search for changed classes was incomplete: "+strings.Join(problems, "; "))
	}
	verified := "were verified"
	if t.unasked != "" {
		verified = "were to be verified"
	}
	if cc.Count > t.checked {
		why = append(why, fmt.Sprintf("%d classes changed, more than the %d an agent keeps receipts for, so no agent can prove them all: the first %d by binary name (%s to %s) %s, the other %d were not",
			cc.Count, MaxVerifiedClasses, t.checked, t.first, t.last, verified, cc.Count-t.checked))
	}
	switch {
	case t.unasked != "" && t.checked > 0:
		why = append(why, fmt.Sprintf("none of the %d classes could be verified: %s", t.checked, t.unasked))
	case t.applied < t.checked:
		why = append(why, fmt.Sprintf("%d of the %d classes verified are applied with the built bytes; not applied: %s; changedClasses lists them, those not applied first (reclazz_diagnose explains one)",
			t.applied, t.checked, statusCounts(t.byStatus)))
	}
	if t.ended != "" {
		why = append(why, t.ended)
	}
	if t.settled > 0 {
		why = append(why, fmt.Sprintf("the %d receipts not_observed or mismatch are final: the agent released the build, has nothing pending and did not reload those bytes", t.settled))
	}
	if t.applied == t.checked && t.checked > 0 {
		why = append(why, fmt.Sprintf("all %d classes verified are applied with the built bytes", t.checked))
	}
	return "; changedClasses.allApplied is false, the bytes are not proven live: " + strings.Join(why, "; ")
}

// statusCounts spells counts by status, by status name: "2 not_observed, 1
// unavailable".
func statusCounts(by map[string]int) string {
	statuses := make([]string, 0, len(by))
	for s := range by {
		statuses = append(statuses, s)
	}
	slices.Sort(statuses)
	parts := make([]string, len(statuses))
	for i, s := range statuses {
		parts[i] = fmt.Sprintf("%d %s", by[s], s)
	}
	return strings.Join(parts, ", ")
}
