package agentproto_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/buildguard/buildguard/agentproto"
	"github.com/buildguard/buildguard/agentproto/agenttest"
)

// TestHandshakeFaults runs every handshake fault of the fake agent against
// Dial: the strict rule accepts exactly the valid lines, and after a refused
// handshake the agent has received nothing.
func TestHandshakeFaults(t *testing.T) {
	t.Parallel()
	want := map[agenttest.Handshake]error{
		agenttest.HandshakeOK: nil, agenttest.HandshakeExtraFields: nil, agenttest.HandshakeTwice: nil,
		agenttest.HandshakeSilent: agentproto.ErrNoHandshake, agenttest.HandshakeClose: agentproto.ErrNoHandshake,
		agenttest.HandshakeTruncated: agentproto.ErrNoHandshake,
	}
	for h := agenttest.HandshakeOK; h.String() != "unknown"; h++ {
		t.Run(h.String(), func(t *testing.T) {
			t.Parallel()
			expected, ok := want[h]
			if !ok {
				expected = agentproto.ErrInvalidHandshake
			}
			a := agenttest.NewServer(t, agenttest.WithHeartbeat(-1), agenttest.WithFaults(agenttest.Faults{Handshake: h}))
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
	kind agenttest.Kind
	run  func(ctx context.Context, c *agentproto.Conn) error
}

const sha256A = "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08"

var ops = []op{
	{"build", agenttest.KindBuild, func(ctx context.Context, c *agentproto.Conn) error {
		return c.Build(ctx, agentproto.BuildStarted, "fixture-owner")
	}},
	{"doctor", agenttest.KindDoctor, func(ctx context.Context, c *agentproto.Conn) error { _, err := c.Doctor(ctx); return err }},
	{"verify", agenttest.KindVerify, func(ctx context.Context, c *agentproto.Conn) error {
		_, err := c.Verify(ctx, "com.acme.A", sha256A)
		return err
	}},
	{"reload", agenttest.KindReload, func(ctx context.Context, c *agentproto.Conn) error {
		_, err := c.Reload(ctx, agentproto.ReloadPause)
		return err
	}},
	{"pending", agenttest.KindPending, func(ctx context.Context, c *agentproto.Conn) error {
		_, err := c.Query(ctx, "PENDING")
		return err
	}},
}

// fault is one knob of the matrix with the outcome per operation; a missing
// entry means the default outcome, and "-" means the knob does not apply.
type fault struct {
	name     string
	faults   agenttest.Faults
	reply    agenttest.ReplyFunc
	fallback error              // outcome for ops not listed
	per      map[string]error   // per op
	skip     map[string]bool    // ops the knob does not apply to
	anyOf    map[string][]error // ops whose outcome depends on timing between two failures
}

var errOK = errors.New("ok")

func TestReplyFaultMatrix(t *testing.T) {
	t.Parallel()
	noise := []agenttest.Event{{Level: "HEARTBEAT"}, {Level: "RELOAD", Message: "Reloaded com.acme.X (2ms)"}, {Level: "WARN", Message: "unrelated"}}
	faults := []fault{
		{name: "never reply", reply: agenttest.DropReply, fallback: agentproto.ErrTimeout, per: map[string]error{"pending": agentproto.ErrNoInfo}},
		{name: "reply after the deadline", reply: agenttest.DelayReply(time.Second), fallback: agentproto.ErrTimeout, per: map[string]error{"pending": agentproto.ErrNoInfo}},
		{name: "reply after a short delay", reply: agenttest.DelayReply(30 * time.Millisecond), fallback: errOK},
		{name: "wrong token", reply: agenttest.WrongToken, fallback: agentproto.ErrTimeout, skip: map[string]bool{"pending": true}},
		{name: "wrong token first", reply: agenttest.WrongTokenFirst, fallback: errOK, skip: map[string]bool{"pending": true}},
		{name: "owner suffix missing", reply: agenttest.OmitOwner, fallback: agentproto.ErrTimeout, skip: map[string]bool{"doctor": true, "verify": true, "reload": true, "pending": true}},
		{name: "rejected instead of ack", reply: agenttest.RejectedInsteadOfAck, fallback: agentproto.ErrRejected, skip: map[string]bool{"doctor": true, "verify": true, "reload": true, "pending": true}},
		{name: "broadcast instead of requester", reply: agenttest.BroadcastReply, fallback: errOK},
		{name: "level WARN", reply: agenttest.ReplyLevel("WARN"), fallback: agentproto.ErrTimeout, per: map[string]error{"pending": agentproto.ErrNoInfo}},
		{name: "blank message", reply: agenttest.BlankReply, fallback: agentproto.ErrTimeout, per: map[string]error{"pending": agentproto.ErrInvalidResponse}},
		{name: "duplicate replies", reply: agenttest.Duplicate(2), fallback: errOK},
		{name: "byte trickle", reply: agenttest.TrickleReply, fallback: errOK},
		{name: "interleaved noise", reply: agenttest.Noise(noise...), fallback: errOK},
		{name: "coalesced with other lines", reply: agenttest.CoalesceWith(noise...), fallback: errOK},
		{name: "close after reply", reply: agenttest.CloseAfterReply, fallback: errOK},
		{name: "disconnect mid-line", reply: agenttest.PartialReply, fallback: agentproto.ErrDisconnected, per: map[string]error{"pending": agentproto.ErrNoInfo}},
		{name: "oversized 20 KB", reply: agenttest.OversizeReply(20 << 10), fallback: agentproto.ErrTooLong, per: map[string]error{"pending": errOK}}, // broadcast lines may reach 64 KiB
		{name: "oversized 100 KB", reply: agenttest.OversizeReply(100 << 10), fallback: agentproto.ErrTooLong},
		{name: "line that never ends", reply: agenttest.EndlessReply, anyOf: allOps(agentproto.ErrTimeout, agentproto.ErrTooLong, agentproto.ErrNoInfo)},
		{name: "pid as a number", reply: agenttest.SetField("pid", "48213"), fallback: agentproto.ErrInvalidResponse, skip: map[string]bool{"build": true, "verify": true, "reload": true, "pending": true}},
		{name: "unknown receipt status", reply: agenttest.SetField("status", `"done"`), fallback: agentproto.ErrInvalidResponse, skip: map[string]bool{"build": true, "reload": true, "pending": true}},
		{name: "invalid JSON suffix", reply: agenttest.EditPayload(func(p string) string { return p + "}" }), fallback: agentproto.ErrInvalidResponse, skip: map[string]bool{"build": true, "reload": true, "pending": true}},
		{name: "disconnect after the command", faults: agenttest.Faults{DisconnectOn: func(string) bool { return true }},
			fallback: agentproto.ErrDisconnected, per: map[string]error{"pending": agentproto.ErrNoInfo}},
		{name: "RST after the command", faults: agenttest.Faults{DisconnectOn: func(string) bool { return true }, RST: true},
			fallback: agentproto.ErrDisconnected, per: map[string]error{"pending": agentproto.ErrIO}},
		{name: "handler throws", faults: agenttest.Faults{Fail: func(agenttest.Kind, string) error { return errors.New("boom") }},
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
					fs.Reply = agenttest.ForKind(f.reply, o.kind)
				}
				a := agenttest.NewServer(t, agenttest.WithHeartbeat(-1), agenttest.WithFaults(fs))
				if o.kind == agenttest.KindVerify {
					a.SetReceipt("com.acme.A", agenttest.Receipt{SHA256: sha256A, Source: "/p/A.class", Status: "applied", Detail: "d", CompletedAt: "2026-09-08T09:12:44Z"})
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
		a := agenttest.NewServer(t, agenttest.WithFaults(agenttest.Faults{StopReading: true}))
		err := dialAnd(t, a, func(ctx context.Context, c *agentproto.Conn) error { return c.Build(ctx, agentproto.BuildStarted, "o") })
		if !errors.Is(err, agentproto.ErrTimeout) {
			t.Fatalf("Build = %v, want ErrTimeout", err)
		}
	})
	t.Run("disconnect after handshake", func(t *testing.T) {
		t.Parallel()
		a := agenttest.NewServer(t, agenttest.WithFaults(agenttest.Faults{DisconnectAfterHandshake: true}))
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
		a := agenttest.NewServer(t, agenttest.WithHeartbeat(-1))
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
		a := agenttest.NewServer(t)
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
		a := agenttest.NewServer(t, agenttest.WithIPv6())
		if err := dialAnd(t, a, func(ctx context.Context, c *agentproto.Conn) error { return c.Build(ctx, agentproto.BuildStarted, "o") }); err != nil {
			t.Fatal(err)
		}
	})
	t.Run("CRLF agent", func(t *testing.T) {
		t.Parallel()
		a := agenttest.NewServer(t, agenttest.WithCRLF())
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

func dialAnd(t *testing.T, a *agenttest.Server, f func(ctx context.Context, c *agentproto.Conn) error) error {
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
