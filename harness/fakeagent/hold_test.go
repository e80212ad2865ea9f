package fakeagent

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/buildguard/buildguard/internal/testsupport/wait"
)

// TestHoldTable covers every cell of the docs/agent-protocol.md#5 transition table: three
// preconditions (free, legacy hold, hold named A) × three senders (A, B,
// unowned) × three states.
func TestHoldTable(t *testing.T) {
	t.Parallel()
	type pre struct {
		name  string
		opts  []Option
		state string
	}
	pres := []pre{
		{"free", nil, HoldNone},
		{"legacy", []Option{WithHold("")}, HoldLegacy},
		{"namedA", []Option{WithHold("A")}, HoldNamed},
	}
	// want[pre][sender][state] = accepted, resulting hold, resulting owner
	type result struct {
		ack   bool
		hold  string
		owner string
	}
	want := map[string]map[string]map[string]result{
		"free": {
			"A": {"started": {true, HoldNamed, "A"}, "failed": {false, HoldNone, ""}, "ok": {false, HoldNone, ""}},
			"B": {"started": {true, HoldNamed, "B"}, "failed": {false, HoldNone, ""}, "ok": {false, HoldNone, ""}},
			"":  {"started": {true, HoldLegacy, ""}, "failed": {true, HoldLegacy, ""}, "ok": {true, HoldNone, ""}},
		},
		"legacy": {
			"A": {"started": {false, HoldLegacy, ""}, "failed": {false, HoldLegacy, ""}, "ok": {false, HoldLegacy, ""}},
			"B": {"started": {false, HoldLegacy, ""}, "failed": {false, HoldLegacy, ""}, "ok": {false, HoldLegacy, ""}},
			"":  {"started": {true, HoldLegacy, ""}, "failed": {true, HoldLegacy, ""}, "ok": {true, HoldNone, ""}},
		},
		"namedA": {
			"A": {"started": {true, HoldNamed, "A"}, "failed": {true, HoldNamed, "A"}, "ok": {true, HoldNone, ""}},
			"B": {"started": {false, HoldNamed, "A"}, "failed": {false, HoldNamed, "A"}, "ok": {false, HoldNamed, "A"}},
			"":  {"started": {false, HoldNamed, "A"}, "failed": {false, HoldNamed, "A"}, "ok": {false, HoldNamed, "A"}},
		},
	}
	for _, p := range pres {
		for _, sender := range []string{"A", "B", ""} {
			for _, state := range []string{"started", "failed", "ok"} {
				w := want[p.name][sender][state]
				t.Run(fmt.Sprintf("%s/%q/%s", p.name, sender, state), func(t *testing.T) {
					t.Parallel()
					s := quiet(t, p.opts...)
					if got := s.HoldState(); got != p.state {
						t.Fatalf("precondition %s, want %s", got, p.state)
					}
					gen0 := s.Generation()
					c := dial(t, s)
					cmd := "BUILD " + state + " request=r1"
					suffix := ""
					if sender != "" {
						cmd += " owner=" + sender
						suffix = " owner=" + sender
					}
					c.send(cmd)
					got := c.probe()
					kw := "BUILD_REJECTED"
					if w.ack {
						kw = "BUILD_ACK"
					}
					reply := kw + " r1 " + state + suffix
					if len(got) == 0 || got[len(got)-1] != reply {
						t.Fatalf("got %q, want last %q", got, reply)
					}
					if w.ack && state != "ok" {
						if got[0] != "Build "+state+"; holding 0 class files until BUILD ok" || s.Generation() != gen0+1 {
							t.Fatalf("accepted %s: lines %q, generation %d→%d", state, got, gen0, s.Generation())
						}
					} else if len(got) != 1 || s.Generation() != gen0 {
						t.Fatalf("lines %q, generation %d→%d", got, gen0, s.Generation())
					}
					if err := s.Sync(wait.Context(t, limit)); err != nil {
						t.Fatal(err)
					}
					holding, owner := s.Hold()
					if s.HoldState() != w.hold || owner != w.owner || holding != (w.hold != HoldNone) {
						t.Fatalf("after: hold %s owner %q, want %s %q", s.HoldState(), owner, w.hold, w.owner)
					}
				})
			}
		}
	}
}

// TestOwnerSurvivesDisconnectAndRecovers: ownership outlives the connection;
// the same owner recovers with started … ok from a new connection.
func TestOwnerSurvivesDisconnectAndRecovers(t *testing.T) {
	t.Parallel()
	s := quiet(t)
	c := dial(t, s)
	c.send("BUILD started request=a owner=O")
	c.probe()
	c.nc.Close()
	if err := s.WaitClients(wait.Context(t, limit), 0); err != nil {
		t.Fatal(err)
	}
	d := dial(t, s)
	d.send("BUILD started request=b owner=other")
	d.send("BUILD started request=c owner=O")
	d.send("BUILD ok request=d owner=O")
	got := d.probe()
	if got[0] != "BUILD_REJECTED b started owner=other" || got[2] != "BUILD_ACK c started owner=O" || got[3] != "BUILD_ACK d ok owner=O" {
		t.Fatalf("got %q", got)
	}
	if err := s.WaitHold(wait.Context(t, limit), HoldNone); err != nil {
		t.Fatal(err)
	}
}

// TestSimultaneousStartsOneWins: two owners racing for a free agent.
func TestSimultaneousStartsOneWins(t *testing.T) {
	t.Parallel()
	s := quiet(t)
	var cs []*rawClient
	for i := 0; i < 4; i++ {
		cs = append(cs, dial(t, s))
	}
	var wg sync.WaitGroup
	replies := make([]string, len(cs))
	for i, c := range cs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			fmt.Fprintf(c.nc, "BUILD started request=r%d owner=o%d\n", i, i)
		}()
	}
	wg.Wait()
	acks := 0
	for i, c := range cs {
		for _, m := range c.probe() {
			if strings.Contains(m, fmt.Sprintf(" r%d ", i)) {
				replies[i] = m
			}
		}
		if strings.HasPrefix(replies[i], "BUILD_ACK") {
			acks++
		}
	}
	if acks != 1 {
		t.Fatalf("%d starts won: %q", acks, replies)
	}
}

// TestAcceptanceSuccessAppliesPending: files observed while held are captured
// and reloaded after the owner's ok; the receipt ends applied.
func TestAcceptanceSuccessAppliesPending(t *testing.T) {
	t.Parallel()
	s := quiet(t, WithHold("O"))
	s.AddPendingClass("com.acme.A", "/p/classes/com/acme/A.class", []byte("A1"))
	s.AddPendingClass("com.acme.B", "/p/classes/com/acme/B.class", []byte("B1"))
	s.AddPendingClass("com.acme.A", "/p/classes/com/acme/A.class", []byte("A2")) // newest wins
	if n, _ := s.Pending(); n != 2 {
		t.Fatalf("pending %d, want 2", n)
	}
	c := dial(t, s)
	c.send("BUILD ok request=k owner=O")
	got := c.probe()
	if len(got) == 0 || got[0] != "BUILD_ACK k ok owner=O" {
		t.Fatalf("got %q", got)
	}
	if err := s.Sync(wait.Context(t, limit)); err != nil {
		t.Fatal(err)
	}
	if s.HoldState() != HoldNone {
		t.Fatal("hold not released")
	}
	got = append(got[1:], c.probe()...)
	want := []string{"2 class files changed together; reloading them as one batch", "Reloaded com.acme.A (1ms)", "Reloaded com.acme.B (1ms)", "Batch of 2 class files done"}
	for i := range want {
		if i >= len(got) || !strings.HasPrefix(got[i], want[i]) {
			t.Fatalf("got %q, want %q", got, want)
		}
	}
	r, ok := s.Receipt("com.acme.A")
	if !ok || r.Status != StatusApplied || r.SHA256 != sha("A2") || r.CompletedAt == "" || r.Source != "/p/classes/com/acme/A.class" {
		t.Fatalf("receipt %+v", r)
	}
}

// TestAcceptanceWhilePausedKeepsPending: a successful ok releases the hold
// but the captured batch stays pending while paused (docs/agent-protocol.md#5 step 6, docs/agent-protocol.md#6).
func TestAcceptanceWhilePausedKeepsPending(t *testing.T) {
	t.Parallel()
	s := quiet(t, WithHold("O"), WithPaused())
	s.AddPendingClass("a.A", "/p/a/A.class", []byte("x"))
	c := dial(t, s)
	c.send("BUILD ok request=k owner=O")
	c.probe()
	s.Sync(wait.Context(t, limit))
	c.send("RELOAD status request=s")
	if got := c.probe(); len(got) != 1 || got[0] != "RELOAD_STATE s status paused=true pendingClasses=1 pendingActions=0 buildHold=none" {
		t.Fatalf("got %q", got)
	}
	c.send("RELOAD resume request=r")
	c.probe()
	s.Sync(wait.Context(t, limit))
	if r, ok := s.Receipt("a.A"); !ok || r.Status != StatusApplied {
		t.Fatalf("resume did not admit the pending file: %+v %v", r, ok)
	}
}

func TestAcceptanceFailures(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		outcome Outcome
		message string
	}{
		{AcceptScanError, "Reload task failed: the scan of the build output failed"},
		{AcceptReadError, "Failed to read class file /p/a/A.class: "},
		{AcceptSuperseded, "A later build superseded this success; files remain held"},
	} {
		t.Run(tc.outcome.String(), func(t *testing.T) {
			t.Parallel()
			var mu sync.Mutex
			outcome := tc.outcome
			s := quiet(t, WithHold("O"), WithAcceptance(func(context.Context, string) Outcome {
				mu.Lock()
				defer mu.Unlock()
				return outcome
			}))
			s.AddPendingClass("a.A", "/p/a/A.class", []byte("x"))
			c := dial(t, s)
			c.send("BUILD ok request=k owner=O")
			got := c.probe() // the acceptance may already have reported
			s.Sync(wait.Context(t, limit))
			got = append(got, c.probe()...)
			if len(got) != 2 || got[0] != "BUILD_ACK k ok owner=O" || !strings.HasPrefix(got[1], tc.message) {
				t.Fatalf("got %q, want the ACK then %q", got, tc.message)
			}
			if h, o := s.Hold(); !h || o != "O" {
				t.Fatalf("hold lost: %v %q", h, o)
			}
			if n, _ := s.Pending(); n != 1 {
				t.Fatalf("pending %d, want 1 (restored)", n)
			}
			// The same owner retries and succeeds.
			mu.Lock()
			outcome = AcceptSuccess
			mu.Unlock()
			c.send("BUILD ok request=k2 owner=O")
			c.probe()
			if err := s.WaitHold(wait.Context(t, limit), HoldNone); err != nil {
				t.Fatal(err)
			}
		})
	}
}

// TestDelayedAcceptance: while the capture of A's ok is pending, B's start is
// rejected; A's new start supersedes the pending success.
func TestDelayedAcceptance(t *testing.T) {
	t.Parallel()
	gate := make(chan struct{})
	entered := make(chan struct{}, 1)
	s := quiet(t, WithHold("A"), WithAcceptance(func(ctx context.Context, _ string) Outcome {
		entered <- struct{}{}
		select {
		case <-gate:
		case <-ctx.Done():
		}
		return AcceptSuccess
	}))
	a := dial(t, s)
	b := dial(t, s)
	a.send("BUILD ok request=k owner=A")
	a.probe()
	<-entered
	b.send("BUILD started request=s owner=B")
	if got := b.probe(); len(got) != 1 || got[0] != "BUILD_REJECTED s started owner=B" {
		t.Fatalf("competing start: %q", got)
	}
	a.send("BUILD started request=s2 owner=A")
	a.probe()
	close(gate)
	s.Sync(wait.Context(t, limit))
	if got := a.probe(); len(got) != 1 || got[0] != "A later build superseded this success; files remain held" {
		t.Fatalf("got %q", got)
	}
	if h, o := s.Hold(); !h || o != "A" {
		t.Fatalf("hold %v %q", h, o)
	}
}

func TestUnwiredBuildListeners(t *testing.T) {
	t.Parallel()
	s := quiet(t, WithUnwired(Unwired{OwnedBuild: true}))
	c := dial(t, s)
	c.send("BUILD started request=a owner=O")
	if got := c.probe(); len(got) != 0 {
		t.Fatalf("owned BUILD without owned listener answered %q", got)
	}
	c.send("BUILD started request=b")
	if got := c.probe(); len(got) != 2 || got[1] != "BUILD_ACK b started" || s.HoldState() != HoldLegacy {
		t.Fatalf("legacy listener: %q, hold %s", got, s.HoldState())
	}
	s.SetUnwired(Unwired{OwnedBuild: true, LegacyBuild: true})
	c.send("BUILD ok request=c")
	if got := c.probe(); len(got) != 0 {
		t.Fatalf("no listener answered %q", got)
	}
	s.SetUnwired(Unwired{AckWithoutOwner: true})
	c.send("BUILD ok request=d")
	if got := c.probe(); len(got) != 1 || got[0] != "BUILD_ACK d ok" {
		t.Fatalf("old agent ACK: %q", got)
	}
	s.Sync(wait.Context(t, limit))
	c.send("BUILD started request=e owner=O")
	if got := c.probe(); len(got) != 2 || got[1] != "BUILD_ACK e started" {
		t.Fatalf("old agent ACK: %q", got)
	}
}
