package conformance

import (
	"testing"
)

// liveCases need an agent attached to a live JVM ([Agent.App]).
var liveCases = []testCase{
	{"live/no_hold_reloads", live(testLiveNoHold)},
	{"live/held_until_build_ok", live(testLiveHeld)},
	{"live/failed_build_stays_old", live(testLiveFailed)},
	{"live/identical_recompile_keeps_receipt", live(testLiveIdentical)},
}

// live skips a case, saying why, when the agent has no JVM.
func live(run func(t *testing.T, s *suite, app *App)) func(t *testing.T, s *suite) {
	return func(t *testing.T, s *suite) {
		app := s.agent.App()
		if app == nil {
			t.Skip("not run: this agent is not attached to a live JVM")
		}
		run(t, s, app)
	}
}

// settled returns the values the application prints now: the newest VALUES
// line printed after this call.
func settled(t *testing.T, s *suite, app *App) (a, b int) {
	t.Helper()
	i := app.WaitValues(t, app.Mark(), s.wait, "(any)", func(int, int) bool { return true })
	v := app.Values(i)[0]
	return v[0], v[1]
}

// observeOld waits until the application printed n more lines after from and
// requires every VALUES line since from to satisfy old.
func observeOld(t *testing.T, s *suite, app *App, from, n int, what string, old func(a, b int) bool) {
	t.Helper()
	app.waitLine(t, app.Mark()+n-1, s.wait, "(any)", func(string) bool { return true })
	for _, v := range app.Values(from) {
		if !old(v[0], v[1]) {
			t.Fatalf("%s: the application printed VALUES=%d:%d", what, v[0], v[1])
		}
	}
}

// testLiveNoHold: with no hold, a compiled change goes live and its receipt
// names the bytes on disk.
func testLiveNoHold(t *testing.T, s *suite, app *App) {
	c := s.dial(t)
	_, b := settled(t, s, app)
	v := s.next()
	mark := app.Mark()
	cls := s.agent.Output().Write(t, ClassA, v)
	app.WaitValues(t, mark, s.wait, "with the new A", func(x, y int) bool { return x == v && y == b })
	r := s.pollApplied(t, c, cls)
	if disk := fileSHA256(t, cls.Path); r.ObservedSHA256 != disk {
		t.Errorf("receipt observedSha256 %s, class file on disk %s", r.ObservedSHA256, disk)
	}
}

// testLiveHeld: under an owned hold the change is observed but not applied;
// it appears only after the owner's BUILD ok.
func testLiveHeld(t *testing.T, s *suite, app *App) {
	c := s.dial(t)
	a, b := settled(t, s, app)
	mia := s.owner("mia")
	c.mustBuild(t, "started", mia, true)
	v := s.next()
	start := app.Mark()
	cls := s.agent.Output().Write(t, ClassB, v)
	s.pollState(t, c, "pendingClasses=1 (the held change observed)", func(st reloadState) bool { return st.PendingClasses == 1 })
	observeOld(t, s, app, start, 8, "under a held build", func(x, y int) bool { return x == a && y == b })
	notApplied(t, c, cls)

	okAt := app.Mark()
	c.mustBuild(t, "ok", mia, true)
	first := app.WaitValues(t, start, s.wait, "with the new B after BUILD ok", func(x, y int) bool { return y == v })
	if first < okAt {
		t.Fatalf("the new B appeared at line %d, before BUILD ok was sent (line %d)", first, okAt)
	}
	r := s.pollApplied(t, c, cls)
	if disk := fileSHA256(t, cls.Path); r.ObservedSHA256 != disk {
		t.Errorf("receipt observedSha256 %s, class file on disk %s", r.ObservedSHA256, disk)
	}
	s.holdIs(t, c, "none")
}

// testLiveFailed: after BUILD failed the application keeps the old code; the
// owner's next build (started … ok) brings the fixed code live, and the
// broken version never appears.
func testLiveFailed(t *testing.T, s *suite, app *App) {
	c := s.dial(t)
	a, b := settled(t, s, app)
	nina := s.owner("nina")
	start := app.Mark()
	c.mustBuild(t, "started", nina, true)
	broken := s.next()
	brokenCls := s.agent.Output().Write(t, ClassA, broken)
	s.pollState(t, c, "pendingClasses=1 (the held change observed)", func(st reloadState) bool { return st.PendingClasses == 1 })
	c.mustBuild(t, "failed", nina, true)
	observeOld(t, s, app, start, 8, "after BUILD failed", func(x, y int) bool { return x == a && y == b })
	if st := c.state(t); st.Hold != "named" {
		t.Fatalf("after BUILD failed: buildHold=%s, want named", st.Hold)
	}
	notApplied(t, c, brokenCls)

	c.mustBuild(t, "started", nina, true)
	fixed := s.next()
	fixedCls := s.agent.Output().Write(t, ClassA, fixed)
	okAt := app.Mark()
	c.mustBuild(t, "ok", nina, true)
	first := app.WaitValues(t, start, s.wait, "with the fixed A", func(x, y int) bool { return x == fixed && y == b })
	if first < okAt {
		t.Fatalf("the fixed A appeared at line %d, before BUILD ok was sent (line %d)", first, okAt)
	}
	for _, v := range app.Values(start) {
		if v[0] == broken {
			t.Fatalf("the failed build's A (%d) went live: VALUES=%d:%d", broken, v[0], v[1])
		}
	}
	r := s.pollApplied(t, c, fixedCls)
	if disk := fileSHA256(t, fixedCls.Path); r.ObservedSHA256 != disk {
		t.Errorf("receipt observedSha256 %s, class file on disk %s", r.ObservedSHA256, disk)
	}
	s.holdIs(t, c, "none")
}

// testLiveIdentical: recompiling identical bytes is no new attempt (docs/agent-protocol.md#8): the
// watcher dedupes by content, so the class's receipt stays the one of the
// earlier reload. A later change of the other class is the fence that shows
// the agent has looked at the rewritten file.
func testLiveIdentical(t *testing.T, s *suite, app *App) {
	c := s.dial(t)
	out := s.agent.Output()
	v := s.next()
	first := out.Write(t, ClassA, v)
	r1 := s.pollApplied(t, c, first)
	again := out.Write(t, ClassA, v)
	if again.SHA256 != first.SHA256 {
		t.Fatalf("recompiling the same source gave different bytes (%s, %s); javac is not deterministic here", first.SHA256, again.SHA256)
	}
	w := s.next()
	mark := app.Mark()
	other := out.Write(t, ClassB, w)
	app.WaitValues(t, mark, s.wait, "with the new B", func(x, y int) bool { return x == v && y == w })
	s.pollApplied(t, c, other)
	if r2 := c.verify(t, ClassA, first.SHA256); r2.Status != "applied" || r2.CompletedAt != r1.CompletedAt {
		t.Errorf("after an identical recompile: receipt %s completed at %q, want the earlier applied receipt completed at %q", r2.Status, r2.CompletedAt, r1.CompletedAt)
	}
}
