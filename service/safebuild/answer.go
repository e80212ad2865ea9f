package safebuild

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/buildguard/buildguard/agentproto"
	"github.com/buildguard/buildguard/buildguard"
	"github.com/buildguard/buildguard/service/buildqueue"
)

// The answer, the last stage of a safe build (Run): the result both fronts
// show, the same JSON on each (docs/decisions.md#D2). Every word of its
// detail is composed here from what the earlier stages found: what
// happened, what the agent was last told and acknowledged
// (docs/decisions.md#D21), what the log lacks, what the proof showed, and
// how long the build waited for its turn. A refusal's fix alone is worded
// by the front that asked for the build (Request.Advice).

// answer is the result of the build that p proved, or of the admission
// that never let it run.
func answer(p *proof) *Result {
	a := p.ran.adm
	// changedClasses stays empty unless the build is ok: nothing was searched.
	res := &Result{Build: a.req.Build.Name, Command: a.req.Build.Command, ChangedClasses: ChangedClasses{Classes: []ClassReceipt{}}}
	switch a.denied {
	case deniedNested:
		res.refuse("refused: this is already inside a safe build (" + ActiveEnv + " is set); a nested build would share the outer build's hold. Run the build command directly instead")
		return res
	case deniedStopping:
		res.refuse("refused: the server is stopping; nothing ran")
		return res
	case deniedJoined:
		return joinedResult(a.joined, res)
	case deniedQueue:
		return queueResult(a, res)
	}
	// The build had its turn.
	waited := queueNote(a)
	r := p.ran
	switch r.unready {
	case unreadyOwner:
		res.refuse("refused: the project's owner token: " + r.err.Error())
	case unreadyLog:
		res.refuse("refused: the build log cannot be written, so nothing was asked of the agent: " + r.err.Error())
	case unreadyGuard:
		res.Owner = r.owner
		res.refuse("refused: " + r.err.Error())
	default:
		ranResult(p, res)
	}
	res.Detail += waited
	return res
}

// refuse ends res before anything was asked of the agent, and says so
// (docs/decisions.md#D21).
func (r *Result) refuse(detail string) {
	r.Outcome, r.Detail = OutcomeRefused, detail+"; "+exchange{}.String()
}

// joinedResult is the result the identical build this call joined left
// (data), or base refused when it cannot be read.
func joinedResult(data []byte, base *Result) *Result {
	res := &Result{}
	if err := json.Unmarshal(data, res); err != nil || res.Outcome == "" {
		base.refuse("refused: this call joined an identical build that was waiting, and the result it left cannot be read; nothing ran for this call: call again")
		return base
	}
	return res
}

// queueResult fills res for a build that never got its turn.
func queueResult(a *admission, res *Result) *Result {
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

// queueNote says how long the build that had its turn waited for it, and
// what it ended of an earlier build before it started; "" when neither is
// worth saying.
func queueNote(a *admission) string {
	note := ""
	if a.outlived != "" {
		note += "; before this build started, " + a.outlived
	}
	if n := a.ahead; n > 0 || a.waited >= time.Second {
		note += fmt.Sprintf("; it waited %s for its turn in the project's build queue behind %d %s",
			a.waited.Round(time.Millisecond), n, plural(n, "build", "builds"))
	}
	return note
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// ranResult fills res for a build that ran, as p proved it. Its detail
// says what happened and what the agent was last told (describe), then
// what the log lacks and what the proof showed.
func ranResult(p *proof, res *Result) {
	r := p.ran
	res.Owner = r.owner
	res.DurationMs = r.duration.Milliseconds()
	res.Output = r.output
	res.Diagnostics, res.DiagnosticsOmitted = r.diag.Diagnostics, r.diag.Omitted
	res.Errors, res.Warnings = r.diag.Errors, r.diag.Warnings
	res.FailedTasks, res.FailedModules = r.diag.FailedTasks, r.diag.FailedModules
	res.Outcome, res.ExitCode = r.outcome, r.exitCode
	notes := ""
	if r.capture != nil {
		notes = r.capture.logNote()
	}
	if p.searched {
		var proven string
		res.ChangedClasses, proven = changedClasses(p)
		notes += proven
	}
	res.Detail = describe(res, r.err, r.adm.timeout, r.stopping, r.told, r.adm.req.Advice) + notes
}

// ended says how the command of a build that was cancelled or ran out of
// time ended. One that had exited 0 by itself is not said to have been
// terminated: the cancellation came after, before BUILD ok was sent (while
// the changed classes were searched, or its group's last members waited).
func ended(res *Result) string {
	if res.ExitCode != nil && *res.ExitCode == 0 {
		return "its command had exited 0, but BUILD ok was not sent yet"
	}
	return "its process group was terminated"
}

// describe is the result's detail: what happened, what the agent was last
// told and acknowledged (never a guess, docs/decisions.md#D21), and what to
// do next.
func describe(res *Result, err error, timeout time.Duration, stopping bool, told exchange, advice buildguard.Advice) string {
	var ie *buildguard.InterruptedError
	ran := errors.As(err, &ie) && ie.Ran
	var left *buildguard.StragglersError
	var lost *buildguard.UnconfirmedError
	said, end := told.String(), ended(res)
	switch {
	case res.Outcome == OutcomeRefused:
		// The core's refusal says whether BUILD started was sent and how the
		// agent answered the BUILD failed that followed it; the front's
		// advice says what to do next.
		return advice.Word(err)
	case res.Outcome == OutcomeOK:
		return "the build exited 0 and " + said
	case errors.As(err, &left):
		return fmt.Sprintf("the build exited 0, but %s; they were killed after the grace period and %s. Make the build wait for what it starts", left, said)
	case res.Outcome == OutcomeTimeout && !ran:
		return fmt.Sprintf("the build ran out of time (%s) before its command started; nothing ran; %s", timeout, said)
	case res.Outcome == OutcomeTimeout:
		text := fmt.Sprintf("the build ran out of time (%s): %s and %s", timeout, end, said)
		if w := advice[buildguard.FixBuildTime]; w != "" {
			text += ". " + w // how the front's users allow more time
		}
		return text
	case res.Outcome == OutcomeCancelled:
		what := "the build was cancelled"
		if stopping {
			what = "the build was cancelled because the server is stopping"
		}
		if !ran {
			return what + " before its command started; nothing ran; " + said
		}
		return what + ": " + end + " and " + said
	case errors.As(err, &lost) && lost.Launch == nil && res.ExitCode != nil:
		return fmt.Sprintf("the build exited with code %d, but BUILD %s was not acknowledged (%v); %s", *res.ExitCode, lost.State, lost.Err, said)
	case err != nil && !errors.Is(err, buildguard.ErrUnsafe):
		return err.Error() + "; " + said
	case res.ExitCode != nil && *res.ExitCode != 0:
		return fmt.Sprintf("the build exited with code %d; %s. Read output.tail (and output.logFile), fix the build and call again", *res.ExitCode, said)
	case err != nil:
		return err.Error() + "; " + said
	}
	return "the build failed; " + said
}

// String says what the agent was last told and what that means for the
// project's output.
func (e exchange) String() string {
	const nextBuild = "this project's next successful safe build releases it"
	switch {
	case e.state == "":
		return "the agent was asked for nothing: it holds nothing for this build"
	case e.err == nil && e.state == agentproto.BuildOK:
		return "BUILD ok was acknowledged: the agent releases the output"
	case e.err == nil && e.state == agentproto.BuildFailed:
		return "BUILD failed was acknowledged: the agent keeps serving the classes it had and holds the new output until this project's next successful safe build"
	case e.err == nil:
		return "the agent's last acknowledgement was for BUILD " + e.state + ": it holds the output for this project's owner; " + nextBuild
	case errors.Is(e.err, agentproto.ErrRejected) && e.state == agentproto.BuildFailed:
		return "BUILD failed was rejected: the agent holds nothing for this project's owner (an earlier BUILD ok may have released the output)"
	}
	return fmt.Sprintf("BUILD %s was not acknowledged (%v): the agent may still hold the output for this project's owner; %s", e.state, e.err, nextBuild)
}

// logNote says what the log on disk lacks, for the result's detail: ""
// when it holds every byte the build printed.
func (c *capture) logNote() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	note := ""
	if c.unparsed > 0 {
		note = fmt.Sprintf("; %d bytes of the output were not read for diagnostics (the parser fell behind the build); the log has them", c.unparsed)
	}
	switch {
	case c.logErr != nil:
		return note + fmt.Sprintf("; the log is incomplete: writing it failed after %d of the %d bytes the build printed (%v); output.tail has the end of the output", c.logged, c.total, c.logErr)
	case c.cut:
		return note + fmt.Sprintf("; the log was cut at %s (maxLogMiB in %s): it holds the first %d of the %d bytes the build printed; output.tail has the end of the output", mib(c.logMax), ConfigFile, c.logged, c.total)
	}
	return note
}

func mib(n int64) string {
	if n%(1<<20) == 0 {
		return fmt.Sprintf("%d MiB", n>>20)
	}
	return fmt.Sprintf("%d bytes", n)
}

// changedClasses is what p proved of the changed classes, and what the
// detail says of it: at most MaxVerifiedClasses were verified, those
// written last, and at most MaxChangedClasses are listed.
func changedClasses(p *proof) (ChangedClasses, string) {
	cc := ChangedClasses{Count: p.count, Complete: len(p.problems) == 0}
	t := tallyOf(p.v)
	cc.Classes = listed(p.v.receipts)
	cc.AllApplied = cc.Complete && t.applied == cc.Count
	return cc, proofDetail(cc, t, p.problems)
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
		why = append(why, fmt.Sprintf("%d classes changed, more than the %d an agent keeps receipts for, so no agent can prove them all: the %d written last (by name %s to %s) %s, the other %d were not",
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
