package fakeagent

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/buildguard/buildguard/agentproto"
	"github.com/buildguard/buildguard/internal/testsupport/wait"
)

func TestOutboxDropAndWarning(t *testing.T) {
	t.Parallel()
	s := quiet(t, WithOutbox(2))
	slow := dial(t, s)
	fast := dial(t, s)
	release := s.HoldWriter(1)
	var warns []string
	read := func(want string) {
		for {
			ev := fast.next()
			if ev.Level == agentproto.LevelWarn {
				warns = append(warns, ev.Message)
				continue
			}
			if ev.Message != want {
				t.Fatalf("fast client got %q, want %q", ev.Message, want)
			}
			return
		}
	}
	for i := 0; i < 1010; i++ {
		m := fmt.Sprintf("e%d", i)
		s.Emit(agentproto.LevelInfo, m)
		read(m)
	}
	fast.probe()
	wantWarns := []string{
		"Status client is not keeping up — dropped 1 event. Reload is unaffected.",
		"Status client is not keeping up — dropped 1000 events. Reload is unaffected.",
	}
	if len(warns) != 2 || warns[0] != wantWarns[0] || warns[1] != wantWarns[1] {
		t.Fatalf("warnings %q", warns)
	}
	if d := s.Drops(); d[0] < 1000 || d[1] != 0 {
		t.Fatalf("drops %v", d)
	}
	release()
	// The writer held at most one dequeued line plus a full outbox of two.
	if a, b := slow.next(), slow.next(); a.Message != "e0" || b.Message != "e1" {
		t.Fatalf("slow client got %q, %q", a.Message, b.Message)
	}
	got := slow.probe() // now the outbox has room for the reply
	if len(got) > 1 || len(got) == 1 && got[0] != "e2" {
		t.Fatalf("slow client got %q after e1, want at most e2", got)
	}
}

func TestHandshakeFaults(t *testing.T) {
	t.Parallel()
	for h := HandshakeOK; h < handshakeEnd; h++ {
		t.Run(h.String(), func(t *testing.T) {
			t.Parallel()
			if p, ok := ParseHandshake(h.String()); !ok || p != h {
				t.Fatalf("ParseHandshake(%q) = %v, %v", h.String(), p, ok)
			}
			s := quiet(t, WithFaults(Faults{Handshake: h}))
			c := dialRaw(t, s)
			switch h {
			case HandshakeSilent:
				c.send("DOCTOR d")
				if l, _ := c.line(); !strings.Contains(l, `"message":"DOCTOR_RESULT d `) {
					t.Fatalf("first line %q, want the DOCTOR reply (no CONNECTED)", l)
				}
				return
			case HandshakeClose:
				c.expectClosed()
				return
			case HandshakeTruncated:
				c.nc.SetReadDeadline(time.Now().Add(limit))
				b, _ := io.ReadAll(c.br)
				if len(b) == 0 || bytes.ContainsRune(b, '\n') || !bytes.HasPrefix(b, []byte(`{"level":"CONNECTED"`)) {
					t.Fatalf("truncated handshake %q", b)
				}
				return
			}
			l, err := c.line()
			if err != nil {
				t.Fatal(err)
			}
			want := map[Handshake]string{
				HandshakeOK:             `,"version":1,"agent":"1.1.1"}`,
				HandshakeMalformed:      `{"level":CONNECTED,`,
				HandshakeArray:          `["CONNECTED",1,"1.1.1"]`,
				HandshakeScalar:         `"CONNECTED"`,
				HandshakeWrongLevel:     `{"level":"INFO","message":"Agent status server connected"`,
				HandshakeAgentMissing:   `Z","version":1}`,
				HandshakeAgentBlank:     `,"agent":"  "}`,
				HandshakeAgentNumber:    `,"agent":1.1}`,
				HandshakeVersionMissing: `Z","agent":"1.1.1"}`,
				HandshakeVersionString:  `,"version":"1",`,
				HandshakeVersionFloat:   `,"version":1.0,`,
				HandshakeVersion0:       `,"version":0,`,
				HandshakeVersion2:       `,"version":2,`,
				HandshakeExtraFields:    `"agent":"1.1.1","build":"2026-09-01",`,
				HandshakeBOM:            "\uFEFF{\"level\":\"CONNECTED\"",
				HandshakeEventFirst:     `{"level":"INFO","message":"Reloaded com.acme.Early (3ms)"`,
				HandshakeHeartbeatFirst: `{"level":"HEARTBEAT","message":""`,
				HandshakeTwice:          `{"level":"CONNECTED"`,
			}[h]
			if !strings.Contains(l, want) {
				t.Fatalf("first line %q, want it to contain %q", l, want)
			}
			if h == HandshakeEventFirst || h == HandshakeHeartbeatFirst || h == HandshakeTwice {
				if l2, _ := c.line(); !strings.HasPrefix(l2, `{"level":"CONNECTED"`) {
					t.Fatalf("second line %q", l2)
				}
			}
		})
	}
}

func TestHandshakeDelayAndDisconnect(t *testing.T) {
	t.Parallel()
	s := quiet(t, WithFaults(Faults{HandshakeDelay: 20 * time.Millisecond, DisconnectAfterHandshake: true}))
	c := dial(t, s)
	c.expectClosed()
}

func TestDisconnectOnCommand(t *testing.T) {
	t.Parallel()
	for _, rst := range []bool{false, true} {
		t.Run(fmt.Sprint("rst=", rst), func(t *testing.T) {
			t.Parallel()
			s := quiet(t, WithHold("O"), WithFaults(Faults{RST: rst, DisconnectOn: func(l string) bool { return strings.HasPrefix(l, "BUILD ok") }}))
			c := dial(t, s)
			c.send("BUILD ok request=k owner=O")
			err := c.expectClosed()
			if rst != errors.Is(err, syscall.ECONNRESET) {
				t.Fatalf("rst=%v: close error %v", rst, err)
			}
			if _, err := s.WaitCommand(wait.Context(t, limit), "BUILD ok"); err != nil {
				t.Fatal(err)
			}
			if s.HoldState() != HoldNamed {
				t.Fatal("the command was handled")
			}
		})
	}
}

func TestStopReading(t *testing.T) {
	t.Parallel()
	s := quiet(t, WithFaults(Faults{StopReading: true}))
	c := dial(t, s)
	c.send("BUILD started request=a owner=o")
	ctx, cancel := contextWithTimeout(100 * time.Millisecond)
	defer cancel()
	if _, err := s.WaitCommand(ctx, "BUILD"); err == nil {
		t.Fatal("agent read a command")
	}
}

func TestRejectBuildAndFail(t *testing.T) {
	t.Parallel()
	s := quiet(t, WithFaults(Faults{
		RejectBuild: func(state, owner string) bool { return state == "started" },
		Fail: func(k Kind, cmd string) error {
			if k == KindDoctor && strings.HasSuffix(cmd, "boom") {
				return errors.New("java.lang.IllegalStateException: boom")
			}
			if k == KindBuild && strings.HasPrefix(cmd, "BUILD failed") {
				return errors.New("NullPointerException")
			}
			return nil
		},
	}))
	c := dial(t, s)
	c.send("BUILD started request=a owner=o")
	c.send("BUILD failed request=b owner=secret")
	c.send("DOCTOR boom")
	got := c.probe()
	want := []string{
		"BUILD_REJECTED a started owner=o",
		"Could not answer BUILD failed request=b owner=secret: NullPointerException",
		"Could not answer DOCTOR boom: java.lang.IllegalStateException: boom",
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("got %q", got)
	}
	if s.HoldState() != HoldNone || s.Generation() != 0 {
		t.Fatal("rejected start changed state")
	}
}

func TestReplyHooks(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name  string
		hook  ReplyFunc
		cmd   string
		check func(t *testing.T, got []string)
	}{
		{"wrong token", WrongToken, "RELOAD status request=t1", func(t *testing.T, got []string) {
			eq(t, got, "RELOAD_STATE wrong-t1 status paused=false pendingClasses=0 pendingActions=0 buildHold=none")
		}},
		{"wrong token first", WrongTokenFirst, "BUILD started request=t1 owner=o", func(t *testing.T, got []string) {
			eq(t, got, "Build started; holding 0 class files until BUILD ok", "BUILD_ACK wrong-t1 started owner=o", "BUILD_ACK t1 started owner=o")
		}},
		{"omit owner", OmitOwner, "BUILD started request=t1 owner=o", func(t *testing.T, got []string) {
			eq(t, got, "Build started; holding 0 class files until BUILD ok", "BUILD_ACK t1 started")
		}},
		{"rejected instead of ack", RejectedInsteadOfAck, "BUILD started request=t1 owner=o", func(t *testing.T, got []string) {
			eq(t, got, "Build started; holding 0 class files until BUILD ok", "BUILD_REJECTED t1 started owner=o")
		}},
		{"blank", BlankReply, "RELOAD status request=t1", func(t *testing.T, got []string) { eq(t, got, "") }},
		{"duplicate", Duplicate(2), "RELOAD status request=t1", func(t *testing.T, got []string) {
			m := "RELOAD_STATE t1 status paused=false pendingClasses=0 pendingActions=0 buildHold=none"
			eq(t, got, m, m, m)
		}},
		{"drop", ForBuild(DropReply, "ok"), "BUILD ok request=t1", func(t *testing.T, got []string) { eq(t, got) }},
		{"drop other state untouched", ForBuild(DropReply, "ok"), "BUILD started request=t1", func(t *testing.T, got []string) {
			eq(t, got, "Build started; holding 0 class files until BUILD ok", "BUILD_ACK t1 started")
		}},
		{"for kind", ForKind(BlankReply, KindVerify), "RELOAD status request=t1", func(t *testing.T, got []string) {
			eq(t, got, "RELOAD_STATE t1 status paused=false pendingClasses=0 pendingActions=0 buildHold=none")
		}},
		{"trickle", TrickleReply, "RELOAD status request=t1", func(t *testing.T, got []string) {
			eq(t, got, "RELOAD_STATE t1 status paused=false pendingClasses=0 pendingActions=0 buildHold=none")
		}},
		{"noise and coalesce", Chain(Noise(Event{agentproto.LevelReload, "Reloaded a.B (2ms)"}, Event{agentproto.LevelHeartbeat, ""}), CoalesceWith(Event{agentproto.LevelWarn, "after"})), "RELOAD status request=t1", func(t *testing.T, got []string) {
			eq(t, got, "Reloaded a.B (2ms)", "", "RELOAD_STATE t1 status paused=false pendingClasses=0 pendingActions=0 buildHold=none", "after")
		}},
		{"set field", SetField("pid", "48213"), "DOCTOR t1", func(t *testing.T, got []string) {
			if len(got) != 1 || !strings.Contains(got[0], `"pid":48213,"javaVersion"`) {
				t.Fatalf("got %q", got)
			}
		}},
		{"delete field", DeleteField("reloadConfirmed"), "DOCTOR t1", func(t *testing.T, got []string) {
			if len(got) != 1 || strings.Contains(got[0], "reloadConfirmed") || !strings.HasSuffix(got[0], `"scanSupported":true}`) {
				t.Fatalf("got %q", got)
			}
		}},
		{"edit payload", EditPayload(func(p string) string { return p + "x" }), "VERIFY t1 a.B " + sha0, func(t *testing.T, got []string) {
			if len(got) != 1 || !strings.HasSuffix(got[0], `"completedAt":""}x`) {
				t.Fatalf("got %q", got)
			}
		}},
		{"query lines dropped", ForKind(DropReply, KindHealth), "HEALTH", func(t *testing.T, got []string) { eq(t, got) }},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			s := quiet(t, WithReply(func(r *Reply) {
				if !strings.HasPrefix(r.Token, "probe") { // leave the probe's DOCTOR alone
					tc.hook(r)
				}
			}))
			c := dial(t, s)
			c.send(tc.cmd)
			tc.check(t, c.probe())
		})
	}
}

func eq(t *testing.T, got []string, want ...string) {
	t.Helper()
	if fmt.Sprintf("%q", got) != fmt.Sprintf("%q", want) {
		t.Fatalf("got %q, want %q", got, want)
	}
}

func TestReplyTransportFaults(t *testing.T) {
	t.Parallel()
	only := func(f ReplyFunc) Option {
		return WithReply(func(r *Reply) {
			if r.Kind == KindReload {
				f(r)
			}
		})
	}
	t.Run("broadcast", func(t *testing.T) {
		t.Parallel()
		s := quiet(t, only(BroadcastReply))
		a, b := dial(t, s), dial(t, s)
		a.send("RELOAD status request=t")
		a.probe()
		if got := b.probe(); len(got) != 1 || !strings.HasPrefix(got[0], "RELOAD_STATE t status") {
			t.Fatalf("other client got %q", got)
		}
	})
	t.Run("level", func(t *testing.T) {
		t.Parallel()
		s := quiet(t, only(ReplyLevel(agentproto.LevelWarn)))
		c := dial(t, s)
		c.send("RELOAD status request=t")
		if ev := c.next(); ev.Level != agentproto.LevelWarn || !strings.HasPrefix(ev.Message, "RELOAD_STATE t ") {
			t.Fatalf("got %q", ev.Raw)
		}
	})
	t.Run("partial", func(t *testing.T) {
		t.Parallel()
		s := quiet(t, only(PartialReply))
		c := dial(t, s)
		c.send("RELOAD status request=t")
		c.nc.SetReadDeadline(time.Now().Add(limit))
		b, err := io.ReadAll(c.br)
		if err != nil || len(b) == 0 || bytes.ContainsRune(b, '\n') || !bytes.HasPrefix(b, []byte(`{"level":"INFO","message":"RELOAD_STATE t`)) {
			t.Fatalf("got %q, %v", b, err)
		}
	})
	t.Run("close after", func(t *testing.T) {
		t.Parallel()
		s := quiet(t, only(CloseAfterReply))
		c := dial(t, s)
		c.send("RELOAD status request=t")
		if ev := c.next(); !strings.HasPrefix(ev.Message, "RELOAD_STATE t ") {
			t.Fatalf("got %q", ev.Raw)
		}
		c.expectClosed()
	})
	t.Run("endless", func(t *testing.T) {
		t.Parallel()
		s := quiet(t, only(EndlessReply))
		c := dial(t, s)
		c.send("RELOAD status request=t")
		buf := make([]byte, 200)
		c.nc.SetReadDeadline(time.Now().Add(limit))
		if _, err := io.ReadFull(c.br, buf); err != nil || bytes.ContainsRune(buf, '\n') || !bytes.HasSuffix(buf, []byte("xxxx")) {
			t.Fatalf("got %q, %v", buf, err)
		}
	})
	for _, n := range []int{20 << 10, 100 << 10} {
		t.Run(fmt.Sprint("oversize ", n), func(t *testing.T) {
			t.Parallel()
			s := quiet(t, only(OversizeReply(n)))
			c := dial(t, s)
			c.send("RELOAD status request=t")
			l, err := c.line()
			if err != nil || len(l) < n-100 || len(l) > n+100 || !strings.Contains(l, `"message":"RELOAD_STATE t status`) {
				t.Fatalf("line of %d bytes, %v", len(l), err)
			}
		})
	}
	t.Run("delay past the deadline", func(t *testing.T) {
		t.Parallel()
		s := quiet(t, only(DelayReply(time.Hour)))
		c := dial(t, s)
		c.send("RELOAD status request=t")
		if got := c.probe(); len(got) != 0 { // the probe is not delayed
			t.Fatalf("delayed reply sent at once: %q", got)
		}
	})
	t.Run("delay", func(t *testing.T) {
		t.Parallel()
		s := quiet(t, only(DelayReply(time.Millisecond)))
		c := dial(t, s)
		c.send("RELOAD status request=t")
		for {
			if ev := c.next(); strings.HasPrefix(ev.Message, "RELOAD_STATE t ") {
				return
			}
		}
	})
}

// TestHalfCloseClosesConnection: on client EOF the agent closes after the
// last command, even with replies still queued (docs/agent-protocol.md#1.4).
func TestHalfCloseClosesConnection(t *testing.T) {
	t.Parallel()
	s := quiet(t)
	c := dial(t, s)
	release := s.HoldWriter(1)
	c.send("RELOAD pause request=p")
	c.nc.(interface{ CloseWrite() error }).CloseWrite()
	if err := s.WaitClients(wait.Context(t, limit), 0); err != nil {
		t.Fatal(err)
	}
	release()
	if !s.Paused() {
		t.Fatal("command before EOF not handled")
	}
	c.nc.SetReadDeadline(time.Now().Add(limit))
	if b, _ := io.ReadAll(c.br); len(b) != 0 {
		t.Fatalf("queued reply delivered after close: %q", b)
	}
}

func TestQueryRequesterOnly(t *testing.T) {
	t.Parallel()
	s := quiet(t, WithReply(RequesterOnly))
	a, b := dial(t, s), dial(t, s)
	a.send("PENDING")
	if got := a.probe(); len(got) != 2 {
		t.Fatalf("requester got %q", got)
	}
	if got := b.probe(); len(got) != 0 {
		t.Fatalf("other client got %q", got)
	}
}

func TestCustomHealthDiagnoseAndRewrite(t *testing.T) {
	t.Parallel()
	s := quiet(t, WithReply(ForKind(Rewrite(func(m string) string { return strings.Replace(m, " pause ", " resume ", 1) }), KindReload)))
	s.SetHealthLines("Reclazz 9.9, up 1 minutes.", "custom")
	s.SetDiagnose(func(name string) []string { return []string{"diag " + name} })
	c := dial(t, s)
	c.send("HEALTH")
	c.send("diagnose x.Y")
	c.send("RELOAD pause request=p")
	eq(t, c.probe(), "Reclazz 9.9, up 1 minutes.", "custom", "diag x.Y",
		"RELOAD_STATE p resume paused=true pendingClasses=0 pendingActions=0 buildHold=none")
}
