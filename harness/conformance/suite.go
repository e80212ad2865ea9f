package conformance

import (
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/buildguard/buildguard/agentproto"
)

// suite is the state of one Run: the agent under test and what the cases
// used on it, so that the agent can be reset between cases.
type suite struct {
	launch Launcher
	opts   Options
	wait   time.Duration
	agent  Agent
	// owners are the owner tokens the cases used, for releasing a hold a
	// failed case left behind.
	owners []string
	// version numbers every written class version; it only grows, so no two
	// writes produce the same bytes.
	version int
}

// testCase is one named case of the suite.
type testCase struct {
	name string
	run  func(t *testing.T, s *suite)
}

// Run runs every case against agents made by launch, each as a subtest of t.
// The cases share one agent: each ends with no hold, no pause and nothing
// pending, and Run checks that before the next case. An agent that is not
// idle after a passing case fails t; after a failing case Run releases what
// it can and, if the agent still is not idle, launches a fresh one. Cases
// that need a live JVM are skipped, with the reason, when the agent has none.
func Run(t *testing.T, launch Launcher, opts Options) {
	s := &suite{launch: launch, opts: opts, wait: opts.wait(), version: 100}
	for _, group := range [][]testCase{protocolCases, liveCases} {
		for _, tc := range group {
			if s.agent == nil {
				s.agent = launch(t)
			}
			passed := t.Run(tc.name, func(t *testing.T) { tc.run(t, s) })
			if why := s.reset(t); why != "" {
				// A passing case leaves the agent idle; if it is not, the
				// agent kept state it should not have.
				report := t.Logf
				if passed {
					report = t.Errorf
				}
				report("after case %s the agent did not return to idle (%s); starting a fresh agent", tc.name, why)
				s.agent.Close()
				s.agent = nil
			}
		}
	}
	if s.agent != nil {
		s.agent.Close()
	}
}

// next returns a class version number never written before.
func (s *suite) next() int {
	s.version++
	return s.version
}

// owner returns a fresh owner token with a readable prefix.
func (s *suite) owner(name string) string {
	o := fmt.Sprintf("%s-%d-%s", name, len(s.owners), agentproto.NewToken()[:8])
	s.owners = append(s.owners, o)
	return o
}

// reset resumes automatic reload and releases any hold with the owners the
// cases used, then waits for the agent to be idle: no hold, no pause,
// nothing pending. It returns why the agent is not idle, or "".
func (s *suite) reset(t *testing.T) (why string) {
	// The agent may still count the connections of the case that just ended.
	var c *client
	for deadline := time.Now().Add(s.wait); ; time.Sleep(20 * time.Millisecond) {
		var err error
		c, err = s.tryDial(t)
		if err == nil {
			break
		}
		if !errors.Is(err, errRefused) || time.Now().After(deadline) {
			return fmt.Sprintf("connecting: %v", err)
		}
	}
	defer c.close()
	st, ok := c.tryStatus(t)
	if !ok {
		return "no answer to RELOAD status"
	}
	if st.Paused {
		c.send(t, "RELOAD resume request="+agentproto.NewToken())
	}
	switch st.Hold {
	case "legacy":
		c.send(t, "BUILD ok request="+agentproto.NewToken())
	case "named":
		for _, o := range s.owners {
			c.send(t, "BUILD ok request="+agentproto.NewToken()+" owner="+o)
		}
	}
	deadline := time.Now().Add(s.wait)
	for {
		st, ok = c.tryStatus(t)
		if !ok {
			return "no answer to RELOAD status"
		}
		if !st.Paused && st.Hold == "none" && st.PendingClasses == 0 {
			return ""
		}
		if time.Now().After(deadline) {
			return "RELOAD status " + st.String()
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// reloadState is a parsed RELOAD_STATE snapshot.
type reloadState struct {
	Paused         bool
	PendingClasses int
	PendingActions int
	Hold           string
}

var reloadStateRE = regexp.MustCompile(`^paused=(true|false) pendingClasses=([0-9]+) pendingActions=([0-9]+) buildHold=(none|named|legacy)$`)

func parseState(t testing.TB, snapshot string) reloadState {
	t.Helper()
	m := reloadStateRE.FindStringSubmatch(snapshot)
	if m == nil {
		t.Fatalf("RELOAD_STATE snapshot %q does not match docs/agent-protocol.md#4.8", snapshot)
	}
	classes, _ := strconv.Atoi(m[2])
	actions, _ := strconv.Atoi(m[3])
	return reloadState{Paused: m[1] == "true", PendingClasses: classes, PendingActions: actions, Hold: m[4]}
}

func (st reloadState) String() string {
	return fmt.Sprintf("paused=%t pendingClasses=%d pendingActions=%d buildHold=%s", st.Paused, st.PendingClasses, st.PendingActions, st.Hold)
}

// tryStatus is a RELOAD status that reports failure instead of failing t.
func (c *client) tryStatus(t testing.TB) (st reloadState, ok bool) {
	tok := agentproto.NewToken()
	prefix := "RELOAD_STATE " + tok + " status "
	c.sendRaw(t, "RELOAD status request="+tok+"\n")
	for {
		line, err := c.readLine()
		if err != nil {
			return st, false
		}
		ev, err := agentproto.ParseEvent([]byte(line))
		if err != nil {
			return st, false
		}
		if rest, found := strings.CutPrefix(ev.Message, prefix); found && ev.Level == agentproto.LevelInfo {
			m := reloadStateRE.FindStringSubmatch(rest)
			if m == nil {
				return st, false
			}
			classes, _ := strconv.Atoi(m[2])
			actions, _ := strconv.Atoi(m[3])
			return reloadState{Paused: m[1] == "true", PendingClasses: classes, PendingActions: actions, Hold: m[4]}, true
		}
	}
}

// state sends RELOAD status and parses the snapshot.
func (c *client) state(t testing.TB) reloadState {
	t.Helper()
	return parseState(t, c.status(t))
}

// pollState polls RELOAD status until cond holds (the agent captures and
// applies asynchronously) and returns that snapshot.
func (s *suite) pollState(t testing.TB, c *client, what string, cond func(reloadState) bool) reloadState {
	t.Helper()
	deadline := time.Now().Add(s.wait)
	for {
		st := c.state(t)
		if cond(st) {
			return st
		}
		if time.Now().After(deadline) {
			t.Fatalf("RELOAD status = %v, still not %s after %v", st, what, s.wait)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// holdIs polls until buildHold is want.
func (s *suite) holdIs(t testing.TB, c *client, want string) reloadState {
	t.Helper()
	return s.pollState(t, c, "buildHold="+want, func(st reloadState) bool { return st.Hold == want })
}

// build sends BUILD <state> with a request token (and owner= unless owner
// is "") and returns whether the agent acknowledged it, with the lines that
// came before the reply. The reply must be exactly the docs/agent-protocol.md#4.7 form.
func (c *client) build(t testing.TB, state, owner string) (acked bool, before []event) {
	t.Helper()
	tok := agentproto.NewToken()
	cmd := "BUILD " + state + " request=" + tok
	suffix := tok + " " + strings.ToLower(state)
	if owner != "" {
		cmd += " owner=" + owner
		suffix += " owner=" + owner
	}
	c.send(t, cmd)
	for {
		ev := c.mustNext(t)
		if ev.Level == agentproto.LevelInfo {
			switch {
			case ev.Message == "BUILD_ACK "+suffix:
				return true, before
			case ev.Message == "BUILD_REJECTED "+suffix:
				return false, before
			case strings.Contains(ev.Message, tok):
				t.Fatalf("reply to %q is %q, want exactly BUILD_ACK or BUILD_REJECTED %s", cmd, ev.Message, suffix)
			}
		}
		if ev.Level != agentproto.LevelHeartbeat {
			before = append(before, ev)
		}
	}
}

// mustBuild sends BUILD and requires the given verdict.
func (c *client) mustBuild(t testing.TB, state, owner string, wantAck bool) []event {
	t.Helper()
	acked, before := c.build(t, state, owner)
	if acked != wantAck {
		verdict := map[bool]string{true: "BUILD_ACK", false: "BUILD_REJECTED"}
		who := "unowned"
		if owner != "" {
			who = "owner " + owner
		}
		t.Fatalf("BUILD %s from %s: got %s, want %s", state, who, verdict[acked], verdict[wantAck])
	}
	return before
}

// receipt is a VERIFY_RESULT payload.
type receipt struct {
	RequestID, SessionID, ClassName, ExpectedSHA256, ObservedSHA256, Status, Source, Detail, CompletedAt string
}

// receiptKeys are the nine fields of docs/agent-protocol.md#8 in their order.
var receiptKeys = []string{"requestId", "sessionId", "className", "expectedSha256", "observedSha256", "status", "source", "detail", "completedAt"}

// verify sends VERIFY and checks the payload's shape: exactly the nine
// fields in order, all strings, echoing the query, a known status.
func (c *client) verify(t testing.TB, class, sha string) receipt {
	t.Helper()
	tok := agentproto.NewToken()
	body, _ := c.request(t, "VERIFY "+tok+" "+class+" "+sha, "VERIFY_RESULT "+tok+" ")
	obj, err := agentproto.ParseObject([]byte(body))
	if err != nil {
		t.Fatalf("VERIFY_RESULT payload is not a JSON object: %s: %v", body, err)
	}
	var keys []string
	vals := map[string]string{}
	for _, m := range obj {
		keys = append(keys, m.Key)
		var s string
		if err := json.Unmarshal(m.Value, &s); err != nil {
			t.Fatalf("VERIFY_RESULT field %q is %s, want a JSON string", m.Key, m.Value)
		}
		vals[m.Key] = s
	}
	if strings.Join(keys, ",") != strings.Join(receiptKeys, ",") {
		t.Fatalf("VERIFY_RESULT fields are %v, want exactly %v in that order", keys, receiptKeys)
	}
	r := receipt{vals["requestId"], vals["sessionId"], vals["className"], vals["expectedSha256"], vals["observedSha256"],
		vals["status"], vals["source"], vals["detail"], vals["completedAt"]}
	switch {
	case r.RequestID != tok || r.ClassName != class || r.ExpectedSHA256 != sha:
		t.Fatalf("VERIFY_RESULT does not echo the query (%s %s %s): %s", tok, class, sha, body)
	case strings.TrimSpace(r.SessionID) == "":
		t.Fatalf("VERIFY_RESULT has a blank sessionId: %s", body)
	case r.ObservedSHA256 != "" && !agentproto.ValidSHA256(r.ObservedSHA256):
		t.Fatalf("VERIFY_RESULT observedSha256 %q is not a lower-case SHA-256: %s", r.ObservedSHA256, body)
	case r.CompletedAt != "" && !timestampRE.MatchString(r.CompletedAt):
		t.Fatalf("VERIFY_RESULT completedAt %q is not an Instant.toString() value: %s", r.CompletedAt, body)
	case agentproto.UTF16Len(r.Source) > 200 || agentproto.UTF16Len(r.Detail) > 200:
		t.Fatalf("VERIFY_RESULT source or detail longer than 200 chars: %s", body)
	}
	switch r.Status {
	case agentproto.ReceiptApplied, agentproto.ReceiptRunning, agentproto.ReceiptFailed, agentproto.ReceiptUnverified,
		agentproto.ReceiptMismatch, agentproto.ReceiptNotObserved:
	default:
		t.Fatalf("VERIFY_RESULT status %q is not one of docs/agent-protocol.md#8: %s", r.Status, body)
	}
	return r
}

// pollApplied polls VERIFY for cls until the receipt is no longer running
// or not_observed, and requires applied with exactly cls's bytes.
func (s *suite) pollApplied(t testing.TB, c *client, cls Class) receipt {
	t.Helper()
	deadline := time.Now().Add(s.wait)
	for {
		r := c.verify(t, cls.Name, cls.SHA256)
		if r.Status != agentproto.ReceiptRunning && r.Status != agentproto.ReceiptNotObserved && r.Status != agentproto.ReceiptMismatch {
			if r.Status != agentproto.ReceiptApplied {
				t.Fatalf("receipt of %s (%s) is %s (%s), want applied", cls.Name, cls.Path, r.Status, r.Detail)
			}
			if r.ObservedSHA256 != cls.SHA256 || r.CompletedAt == "" {
				t.Fatalf("applied receipt %+v lacks observedSha256 %s or completedAt", r, cls.SHA256)
			}
			return r
		}
		if time.Now().After(deadline) {
			t.Fatalf("receipt of %s is still %s (observed %q) after %v, want applied %s", cls.Name, r.Status, r.ObservedSHA256, s.wait, cls.SHA256)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// notApplied requires that the receipt of cls does not claim its bytes were
// applied (running and applied are both claims of an attempt).
func notApplied(t testing.TB, c *client, cls Class) receipt {
	t.Helper()
	r := c.verify(t, cls.Name, cls.SHA256)
	if r.Status != agentproto.ReceiptNotObserved && r.Status != agentproto.ReceiptMismatch {
		t.Fatalf("receipt of held bytes %s of %s is %s (%s), want not_observed or mismatch: nothing of a held build may be attempted", cls.SHA256, cls.Name, r.Status, r.Detail)
	}
	return r
}

// quiet requires that no line but heartbeats arrived.
func quiet(t testing.TB, what string, evs []event) {
	t.Helper()
	if len(evs) > 0 {
		t.Errorf("%s: want no reply, got %d line(s):\n%s", what, len(evs), joinEvents(evs))
	}
}

func joinEvents(evs []event) string {
	var b strings.Builder
	for _, e := range evs {
		b.WriteString("  " + e.Raw + "\n")
	}
	return b.String()
}
