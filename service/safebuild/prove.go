package safebuild

import (
	"context"

	"github.com/buildguard/buildguard/agentproto"
)

// The proof of the bytes (docs/safe-build.md#8), the third stage of a safe
// build (Run), in three steps of one attempt: searchBefore (before the
// hold) and searchAfter (right after the command exited 0, before BUILD
// ok), which the hold session calls while the build runs, and prove
// (after BUILD ok was acknowledged). The search is in search.go (with
// the kernel's report of changes in watch_linux.go), the rounds of VERIFY
// in classes.go.

// searchBefore asks the agent on conn for its watched directories (DOCTOR)
// and notes their class files or starts watching them, within ctx.
func (a *attempt) searchBefore(ctx context.Context, conn *agentproto.Conn) {
	d, err := a.doctor(ctx, conn)
	a.search.addDoctor(d, err)
	a.knownBefore = err == nil && d.Status == agentproto.DoctorObserved
	sctx, cancel := context.WithTimeout(ctx, a.b.cfg.VerifyWait)
	defer cancel()
	a.before.watch.close() // of an earlier dial
	a.before = noteBefore(sctx, a.search.dirs)
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

// open connects to port and runs the project gate when confirm is set.
func (b *Builder) open(ctx context.Context, port int, confirm string) (*agentproto.Conn, error) {
	conn, err := b.cfg.Dialer.Dial(ctx, port)
	if err != nil {
		return nil, err
	}
	if confirm != "" {
		gctx, cancel := context.WithTimeout(ctx, b.cfg.AgentTimeout)
		err := conn.ConfirmProject(gctx, confirm)
		cancel()
		if err != nil {
			conn.Close()
			return nil, err
		}
	}
	return conn, nil
}

// searchAfter runs once the command exited 0 and while the agent still
// holds: on a connection of its own it asks DOCTOR again (the build may
// have created directories the agent now watches), finds the class files
// the build changed in every watched directory and hashes them, all within
// the build's context. The connection is kept for the verification.
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
	changed, problems, lost := changedSince(sctx, a.before, a.search.dirs)
	switch {
	case lost != "":
		a.b.log.Debug("the kernel's report of the build's changes is incomplete; every watched directory was searched", "reason", lost)
	case a.before.watch != nil:
		a.b.log.Debug("the kernel reported the build's changes", "classes", len(changed))
	}
	a.changed = changed
	for _, p := range problems {
		a.search.problem("%s", p)
	}
}

// proof is what the prove stage hands the answer: for an ok build, the
// changed class files found, whether their search was complete, and what
// the agent answered for those verified (docs/decisions.md#D21).
type proof struct {
	ran *ran

	searched bool     // the build was ok: the classes were searched and verified
	count    int      // the changed class files found
	problems []string // why the search may be incomplete; none when complete
	v        verification
}

// prove verifies the changed class files against the agent after BUILD ok
// was acknowledged: at most MaxVerifiedClasses, those written last
// (changes puts them first). A build that was
// not ok proves nothing. Stop ends the verification too.
func (b *Builder) prove(r *ran) *proof {
	p := &proof{ran: r}
	if r.outcome != OutcomeOK {
		return p
	}
	a := r.attempt
	if !a.after {
		a.search.problem("the class files were not searched after the build")
	}
	p.searched, p.count, p.problems = true, len(a.changed), a.search.problems
	checked := a.changed[:min(len(a.changed), MaxVerifiedClasses)]
	switch {
	case len(checked) == 0:
	case a.proof == nil:
		p.v = unasked(checked, "no verification session: the agent could not be reached after the build")
	case a.search.noVerifier:
		// VERIFY is ignored: nothing could be read until the deadline.
		p.v = unasked(checked, "the agent's verifier is not wired (DOCTOR verifySupported is false), so it answers no VERIFY")
	default:
		vctx, cancel := context.WithTimeout(r.adm.sctx, b.cfg.VerifyWait)
		defer cancel()
		p.v = verifyClasses(vctx, a.proof, checked)
	}
	return p
}

// unavailable is a receipt of status unavailable for each of files.
func unavailable(files []changedFile, detail string) []ClassReceipt {
	out := make([]ClassReceipt, len(files))
	for i, f := range files {
		out[i] = ClassReceipt{ClassName: f.class, SHA256: f.sum, Status: "unavailable", Detail: detail}
	}
	return out
}
