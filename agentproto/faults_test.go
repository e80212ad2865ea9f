package agentproto_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/buildguard/buildguard/agentproto"
	"github.com/buildguard/buildguard/harness/fakeagent"
)

// TestHandshakeFaults runs every handshake fault of the fake agent against
// Dial: the strict rule accepts exactly the valid lines, and after a refused
// handshake the agent has received nothing.
func TestHandshakeFaults(t *testing.T) {
	t.Parallel()
	want := map[fakeagent.Handshake]error{
		fakeagent.HandshakeOK: nil, fakeagent.HandshakeExtraFields: nil, fakeagent.HandshakeTwice: nil,
		fakeagent.HandshakeSilent: agentproto.ErrNoHandshake, fakeagent.HandshakeClose: agentproto.ErrNoHandshake,
		fakeagent.HandshakeTruncated: agentproto.ErrNoHandshake,
	}
	for h := fakeagent.HandshakeOK; h.String() != "unknown"; h++ {
		t.Run(h.String(), func(t *testing.T) {
			t.Parallel()
			expected, ok := want[h]
			if !ok {
				expected = agentproto.ErrInvalidHandshake
			}
			a := fakeagent.NewServer(t, fakeagent.WithHeartbeat(-1), fakeagent.WithFaults(fakeagent.Faults{Handshake: h}))
			ctx, cancel := context.WithTimeout(context.Background(), 400*time.Millisecond)
			defer cancel()
			c, err := agentproto.Dial(ctx, a.Port())
			if expected == nil {
				if err != nil {
					t.Fatalf("Dial = %v, want success", err)
				}
				defer c.Close()
				if err := c.Build(ctx, agentproto.BuildStarted, "o"); err != nil {
					t.Fatalf("Build after a %s handshake: %v", h, err)
				}
				return
			}
			if !errors.Is(err, expected) {
				t.Fatalf("Dial = %v, want %v", err, expected)
			}
			if cmds := a.Commands(); len(cmds) != 0 {
				t.Errorf("agent received %q after a refused handshake", cmds)
			}
		})
	}
}

// op is one client operation of the matrix.
type op struct {
	name string
	kind fakeagent.Kind
	run  func(ctx context.Context, c *agentproto.Conn) error
}

const sha256A = "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08"

var ops = []op{
	{"build", fakeagent.KindBuild, func(ctx context.Context, c *agentproto.Conn) error {
		return c.Build(ctx, agentproto.BuildStarted, "fixture-owner")
	}},
	{"doctor", fakeagent.KindDoctor, func(ctx context.Context, c *agentproto.Conn) error { _, err := c.Doctor(ctx); return err }},
	{"verify", fakeagent.KindVerify, func(ctx context.Context, c *agentproto.Conn) error {
		_, err := c.Verify(ctx, "com.acme.A", sha256A)
		return err
	}},
	{"reload", fakeagent.KindReload, func(ctx context.Context, c *agentproto.Conn) error {
		_, err := c.Reload(ctx, agentproto.ReloadPause)
		return err
	}},
	{"pending", fakeagent.KindPending, func(ctx context.Context, c *agentproto.Conn) error {
		_, err := c.Query(ctx, "PENDING")
		return err
	}},
}

// fault is one knob of the matrix with the outcome per operation; a missing
// entry means the default outcome, and "-" means the knob does not apply.
type fault struct {
	name     string
	faults   fakeagent.Faults
	reply    fakeagent.ReplyFunc
	fallback error              // outcome for ops not listed
	per      map[string]error   // per op
	skip     map[string]bool    // ops the knob does not apply to
	anyOf    map[string][]error // ops whose outcome depends on timing between two failures
}

var errOK = errors.New("ok")

func TestReplyFaultMatrix(t *testing.T) {
	t.Parallel()
	noise := []fakeagent.Event{{Level: "HEARTBEAT"}, {Level: "RELOAD", Message: "Reloaded com.acme.X (2ms)"}, {Level: "WARN", Message: "unrelated"}}
	faults := []fault{
		{name: "never reply", reply: fakeagent.DropReply, fallback: agentproto.ErrTimeout, per: map[string]error{"pending": agentproto.ErrNoInfo}},
		{name: "reply after the deadline", reply: fakeagent.DelayReply(time.Second), fallback: agentproto.ErrTimeout, per: map[string]error{"pending": agentproto.ErrNoInfo}},
		{name: "reply after a short delay", reply: fakeagent.DelayReply(30 * time.Millisecond), fallback: errOK},
		{name: "wrong token", reply: fakeagent.WrongToken, fallback: agentproto.ErrTimeout, skip: map[string]bool{"pending": true}},
		{name: "wrong token first", reply: fakeagent.WrongTokenFirst, fallback: errOK, skip: map[string]bool{"pending": true}},
		{name: "owner suffix missing", reply: fakeagent.OmitOwner, fallback: agentproto.ErrNoOwner, skip: map[string]bool{"doctor": true, "verify": true, "reload": true, "pending": true}},
		{name: "rejected instead of ack", reply: fakeagent.RejectedInsteadOfAck, fallback: agentproto.ErrRejected, skip: map[string]bool{"doctor": true, "verify": true, "reload": true, "pending": true}},
		{name: "broadcast instead of requester", reply: fakeagent.BroadcastReply, fallback: errOK},
		{name: "level WARN", reply: fakeagent.ReplyLevel("WARN"), fallback: agentproto.ErrTimeout, per: map[string]error{"pending": agentproto.ErrNoInfo}},
		{name: "blank message", reply: fakeagent.BlankReply, fallback: agentproto.ErrTimeout, per: map[string]error{"pending": agentproto.ErrInvalidResponse}},
		{name: "duplicate replies", reply: fakeagent.Duplicate(2), fallback: errOK},
		{name: "byte trickle", reply: fakeagent.TrickleReply, fallback: errOK},
		{name: "interleaved noise", reply: fakeagent.Noise(noise...), fallback: errOK},
		{name: "coalesced with other lines", reply: fakeagent.CoalesceWith(noise...), fallback: errOK},
		{name: "close after reply", reply: fakeagent.CloseAfterReply, fallback: errOK},
		{name: "disconnect mid-line", reply: fakeagent.PartialReply, fallback: agentproto.ErrDisconnected, per: map[string]error{"pending": agentproto.ErrNoInfo}},
		{name: "oversized 20 KB", reply: fakeagent.OversizeReply(20 << 10), fallback: agentproto.ErrTooLong, per: map[string]error{"pending": errOK}}, // broadcast lines may reach 64 KiB
		{name: "oversized 100 KB", reply: fakeagent.OversizeReply(100 << 10), fallback: agentproto.ErrTooLong},
		{name: "line that never ends", reply: fakeagent.EndlessReply, anyOf: allOps(agentproto.ErrTimeout, agentproto.ErrTooLong, agentproto.ErrNoInfo)},
		{name: "pid as a number", reply: fakeagent.SetField("pid", "48213"), fallback: agentproto.ErrInvalidResponse, skip: map[string]bool{"build": true, "verify": true, "reload": true, "pending": true}},
		{name: "unknown receipt status", reply: fakeagent.SetField("status", `"done"`), fallback: agentproto.ErrInvalidResponse, skip: map[string]bool{"build": true, "reload": true, "pending": true}},
		{name: "invalid JSON suffix", reply: fakeagent.EditPayload(func(p string) string { return p + "}" }), fallback: agentproto.ErrInvalidResponse, skip: map[string]bool{"build": true, "reload": true, "pending": true}},
		{name: "disconnect after the command", faults: fakeagent.Faults{DisconnectOn: func(string) bool { return true }},
			fallback: agentproto.ErrDisconnected, per: map[string]error{"pending": agentproto.ErrNoInfo}},
		{name: "RST after the command", faults: fakeagent.Faults{DisconnectOn: func(string) bool { return true }, RST: true},
			fallback: agentproto.ErrDisconnected, per: map[string]error{"pending": agentproto.ErrIO}},
		{name: "handler throws", faults: fakeagent.Faults{Fail: func(fakeagent.Kind, string) error { return errors.New("boom") }},
			fallback: agentproto.ErrTimeout, per: map[string]error{"pending": agentproto.ErrNoInfo}},
	}
	for _, f := range faults {
		for _, o := range ops {
			if f.skip[o.name] {
				continue
			}
			t.Run(f.name+"/"+o.name, func(t *testing.T) {
				t.Parallel()
				fs := f.faults
				if f.reply != nil {
					fs.Reply = fakeagent.ForKind(f.reply, o.kind)
				}
				a := fakeagent.NewServer(t, fakeagent.WithHeartbeat(-1), fakeagent.WithFaults(fs))
				if o.kind == fakeagent.KindVerify {
					a.SetReceipt("com.acme.A", fakeagent.Receipt{SHA256: sha256A, Source: "/p/A.class", Status: "applied", Detail: "d", CompletedAt: "2026-09-08T09:12:44Z"})
				}
				expected := []error{f.fallback}
				if e, ok := f.per[o.name]; ok {
					expected = []error{e}
				}
				if alts, ok := f.anyOf[o.name]; ok {
					expected = alts
				}
				// A failure by deadline needs a short one; a success may take
				// its time (a byte trickle is slow on purpose).
				bound := 150 * time.Millisecond
				if expected[0] == errOK {
					bound = 5 * time.Second
				}
				dctx, dcancel := context.WithTimeout(context.Background(), 5*time.Second)
				defer dcancel()
				c, err := agentproto.Dial(dctx, a.Port())
				if err != nil {
					t.Fatal(err)
				}
				defer c.Close()
				ctx, cancel := context.WithTimeout(context.Background(), bound)
				defer cancel()
				err = o.run(ctx, c)
				matched := false
				for _, e := range expected {
					matched = matched || e == errOK && err == nil || e != errOK && errors.Is(err, e)
				}
				if !matched {
					t.Fatalf("%s = %v, want one of %v", o.name, err, expected)
				}
				if cmds := a.Commands(); len(cmds) != 1 {
					t.Errorf("agent received %q; the operation must send exactly one command", cmds)
				}
			})
		}
	}
}

func allOps(errs ...error) map[string][]error {
	m := map[string][]error{}
	for _, o := range ops {
		m[o.name] = errs
	}
	return m
}

// TestTransportFaults covers the knobs that act on the connection itself.
func TestTransportFaults(t *testing.T) {
	t.Parallel()
	t.Run("agent stops reading", func(t *testing.T) {
		t.Parallel()
		a := fakeagent.NewServer(t, fakeagent.WithFaults(fakeagent.Faults{StopReading: true}))
		err := dialAnd(t, a, func(ctx context.Context, c *agentproto.Conn) error { return c.Build(ctx, agentproto.BuildStarted, "o") })
		if !errors.Is(err, agentproto.ErrTimeout) {
			t.Fatalf("Build = %v, want ErrTimeout", err)
		}
	})
	t.Run("disconnect after handshake", func(t *testing.T) {
		t.Parallel()
		a := fakeagent.NewServer(t, fakeagent.WithFaults(fakeagent.Faults{DisconnectAfterHandshake: true}))
		err := dialAnd(t, a, func(ctx context.Context, c *agentproto.Conn) error { return c.Build(ctx, agentproto.BuildStarted, "o") })
		if !errors.Is(err, agentproto.ErrDisconnected) && !errors.Is(err, agentproto.ErrIO) {
			t.Fatalf("Build = %v, want ErrDisconnected or ErrIO", err)
		}
		if holding, _ := a.Hold(); holding {
			t.Error("a hold was installed")
		}
	})
	t.Run("sixth client", func(t *testing.T) {
		t.Parallel()
		a := fakeagent.NewServer(t, fakeagent.WithHeartbeat(-1))
		for i := 0; i < 5; i++ {
			c, err := agentproto.Dial(context.Background(), a.Port())
			if err != nil {
				t.Fatalf("client %d: %v", i+1, err)
			}
			defer c.Close()
		}
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		if _, err := agentproto.Dial(ctx, a.Port()); !errors.Is(err, agentproto.ErrNoHandshake) {
			t.Fatalf("sixth Dial = %v, want ErrNoHandshake", err)
		}
	})
	t.Run("port file points to a closed port", func(t *testing.T) {
		t.Parallel()
		a := fakeagent.NewServer(t)
		a.Stop(true)
		port, err := agentproto.Endpoint{PortFile: a.PortFile()}.Resolve()
		if err != nil {
			t.Fatal(err)
		}
		if _, err := agentproto.Dial(context.Background(), port); !errors.Is(err, agentproto.ErrUnreachable) {
			t.Fatalf("Dial = %v, want ErrUnreachable", err)
		}
	})
	t.Run("IPv6-only agent", func(t *testing.T) {
		t.Parallel()
		a := fakeagent.NewServer(t, fakeagent.WithIPv6())
		if err := dialAnd(t, a, func(ctx context.Context, c *agentproto.Conn) error { return c.Build(ctx, agentproto.BuildStarted, "o") }); err != nil {
			t.Fatal(err)
		}
	})
	t.Run("CRLF agent", func(t *testing.T) {
		t.Parallel()
		a := fakeagent.NewServer(t, fakeagent.WithCRLF())
		err := dialAnd(t, a, func(ctx context.Context, c *agentproto.Conn) error {
			if _, err := c.Doctor(ctx); err != nil {
				return err
			}
			lines, err := c.Query(ctx, "PENDING")
			if err == nil && strings.ContainsAny(strings.Join(lines, ""), "\r") {
				return fmt.Errorf("a \\r survived: %q", lines)
			}
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
	})
}

func dialAnd(t *testing.T, a *fakeagent.Server, f func(ctx context.Context, c *agentproto.Conn) error) error {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 700*time.Millisecond)
	defer cancel()
	c, err := agentproto.Dial(ctx, a.Port())
	if err != nil {
		return err
	}
	defer c.Close()
	return f(ctx, c)
}
