package conformance

import (
	"strings"
	"testing"
)

// testOwnersFree: the "!holding" rows of the docs/agent-protocol.md#5 table.
func testOwnersFree(t *testing.T, s *suite) {
	c := s.dial(t)
	alice := s.owner("alice")
	// A named failed or ok without a hold is rejected and installs nothing.
	c.mustBuild(t, "failed", alice, false)
	c.mustBuild(t, "ok", alice, false)
	if st := c.state(t); st.Hold != "none" {
		t.Fatalf("rejected named commands left buildHold=%s", st.Hold)
	}
	// Only started acquires a free named hold.
	before := c.mustBuild(t, "started", alice, true)
	if !hasInfo(before, "Build started; holding ", " class files until BUILD ok") {
		t.Errorf("accepted started: no broadcast \"Build started; holding N class files until BUILD ok\" before the ACK:\n%s", joinEvents(before))
	}
	if st := c.state(t); st.Hold != "named" {
		t.Fatalf("after an owned started: buildHold=%s, want named", st.Hold)
	}
	c.mustBuild(t, "ok", alice, true)
	s.holdIs(t, c, "none")

	// An unowned ok on a free agent is accepted and holds nothing (docs/agent-protocol.md#12 item 9).
	c.mustBuild(t, "ok", "", true)
	if st := c.state(t); st.Hold != "none" {
		t.Fatalf("an unowned ok on a free agent left buildHold=%s", st.Hold)
	}
	// An unowned failed on a free agent installs a legacy hold (docs/agent-protocol.md#12 item 9).
	before = c.mustBuild(t, "failed", "", true)
	if !hasInfo(before, "Build failed; holding ", " class files until BUILD ok") {
		t.Errorf("accepted failed: no broadcast \"Build failed; holding N class files until BUILD ok\" before the ACK:\n%s", joinEvents(before))
	}
	if st := c.state(t); st.Hold != "legacy" {
		t.Fatalf("after an unowned failed on a free agent: buildHold=%s, want legacy", st.Hold)
	}
	// Any unowned ok, from any connection, releases a legacy hold (docs/agent-protocol.md#12 item 10).
	other := s.dial(t)
	other.mustBuild(t, "ok", "", true)
	s.holdIs(t, c, "none")
}

// testOwnersNamed: a named hold rejects other owners (case-sensitive) and
// unowned commands; its owner may start again, fail, and finish.
func testOwnersNamed(t *testing.T, s *suite) {
	c := s.dial(t)
	bob, carol := s.owner("bob"), s.owner("carol")
	c.mustBuild(t, "started", bob, true)
	for _, state := range []string{"started", "failed", "ok"} {
		c.mustBuild(t, state, carol, false)
		c.mustBuild(t, state, "", false)
		c.mustBuild(t, state, strings.ToUpper(bob), false)
	}
	if st := c.state(t); st.Hold != "named" {
		t.Fatalf("rejected commands changed the hold: buildHold=%s, want named", st.Hold)
	}
	// holding && owner == o: started and failed are accepted and keep the hold.
	before := c.mustBuild(t, "started", bob, true)
	if !hasInfo(before, "Build started; holding ", " class files until BUILD ok") {
		t.Errorf("restart by the owner: no broadcast \"Build started; holding …\":\n%s", joinEvents(before))
	}
	before = c.mustBuild(t, "failed", bob, true)
	if !hasInfo(before, "Build failed; holding ", " class files until BUILD ok") {
		t.Errorf("failed by the owner: no broadcast \"Build failed; holding …\":\n%s", joinEvents(before))
	}
	if st := c.state(t); st.Hold != "named" {
		t.Fatalf("after the owner's failed: buildHold=%s, want named", st.Hold)
	}
	c.mustBuild(t, "started", carol, false)
	c.mustBuild(t, "ok", bob, true)
	s.holdIs(t, c, "none")
	// The hold is gone: another owner may start now.
	c.mustBuild(t, "started", carol, true)
	c.mustBuild(t, "ok", carol, true)
	s.holdIs(t, c, "none")
}

// testOwnersLegacy: a legacy hold rejects every named command and accepts
// every unowned one.
func testOwnersLegacy(t *testing.T, s *suite) {
	c := s.dial(t)
	dave := s.owner("dave")
	c.mustBuild(t, "started", "", true)
	if st := c.state(t); st.Hold != "legacy" {
		t.Fatalf("after an unowned started: buildHold=%s, want legacy", st.Hold)
	}
	for _, state := range []string{"started", "failed", "ok"} {
		c.mustBuild(t, state, dave, false)
	}
	c.mustBuild(t, "started", "", true)
	c.mustBuild(t, "failed", "", true)
	if st := c.state(t); st.Hold != "legacy" {
		t.Fatalf("after unowned started/failed on a legacy hold: buildHold=%s, want legacy", st.Hold)
	}
	c.mustBuild(t, "ok", "", true)
	s.holdIs(t, c, "none")
}

// testOwnersSurviveDisconnect: a hold belongs to its owner token, not to the
// connection; after the connection closes, only the owner can finish it.
func testOwnersSurviveDisconnect(t *testing.T, s *suite) {
	erin, frank := s.owner("erin"), s.owner("frank")
	first := s.dial(t)
	first.mustBuild(t, "started", erin, true)
	first.close()
	c := s.dial(t)
	if st := c.state(t); st.Hold != "named" {
		t.Fatalf("after the owner's connection closed: buildHold=%s, want named", st.Hold)
	}
	c.mustBuild(t, "started", frank, false)
	c.mustBuild(t, "ok", "", false)
	c.mustBuild(t, "ok", erin, true)
	s.holdIs(t, c, "none")
}

// testOwnersRace: two owners start at once on two connections; exactly one wins.
func testOwnersRace(t *testing.T, s *suite) {
	owners := []string{s.owner("gina"), s.owner("hugo")}
	conns := []*client{s.dial(t), s.dial(t)}
	acked := make([]bool, 2)
	// Both commands are written before either reply is read.
	for i := range conns {
		conns[i].send(t, "BUILD started request=race"+string(rune('0'+i))+" owner="+owners[i])
	}
	for i := range conns {
		suffix := "race" + string(rune('0'+i)) + " started owner=" + owners[i]
		msg, _ := conns[i].await(t, "BUILD_")
		switch msg {
		case "BUILD_ACK " + suffix:
			acked[i] = true
		case "BUILD_REJECTED " + suffix:
		default:
			t.Fatalf("connection %d: reply %q, want BUILD_ACK or BUILD_REJECTED %s", i, msg, suffix)
		}
	}
	if acked[0] == acked[1] {
		t.Fatalf("two simultaneous starts by different owners: acked = %v, want exactly one", acked)
	}
	winner := 0
	if acked[1] {
		winner = 1
	}
	conns[winner].mustBuild(t, "ok", owners[winner], true)
	s.holdIs(t, conns[0], "none")
}

// testFailedHold: a failed build keeps its output held, named to its owner;
// nothing it wrote is attempted; the same owner recovers with started … ok,
// and exactly the recovered bytes are applied.
func testFailedHold(t *testing.T, s *suite) {
	c := s.dial(t)
	ivan, judy := s.owner("ivan"), s.owner("judy")
	out := s.agent.Output()
	c.mustBuild(t, "started", ivan, true)
	broken := out.Write(t, ClassA, s.next())
	s.pollState(t, c, "pendingClasses=1 (the held class file observed)", func(st reloadState) bool { return st.PendingClasses == 1 })
	before := c.mustBuild(t, "failed", ivan, true)
	if !hasInfo(before, "Build failed; holding 1 class files until BUILD ok", "") {
		t.Errorf("the owner's failed with one held class: no broadcast \"Build failed; holding 1 class files until BUILD ok\":\n%s", joinEvents(before))
	}
	st := c.state(t)
	if st.Hold != "named" || st.PendingClasses != 1 {
		t.Fatalf("after the owner's failed: %v, want buildHold=named with the class still pending", st)
	}
	notApplied(t, c, broken)
	c.mustBuild(t, "started", judy, false)
	c.mustBuild(t, "ok", judy, false)
	c.mustBuild(t, "ok", "", false)
	notApplied(t, c, broken)

	// Recovery by the same owner.
	c.mustBuild(t, "started", ivan, true)
	fixed := out.Write(t, ClassA, s.next())
	c.mustBuild(t, "ok", ivan, true)
	s.pollState(t, c, "buildHold=none with nothing pending", func(st reloadState) bool { return st.Hold == "none" && st.PendingClasses == 0 })
	s.pollApplied(t, c, fixed)
	if r := c.verify(t, ClassA, broken.SHA256); r.Status != "mismatch" || r.ObservedSHA256 != fixed.SHA256 {
		t.Errorf("VERIFY of the failed build's bytes after recovery: %s observed %s, want mismatch observing %s", r.Status, r.ObservedSHA256, fixed.SHA256)
	}
}
