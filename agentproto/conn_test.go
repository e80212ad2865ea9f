package agentproto

import (
	"context"
	"errors"
	"net"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"
)

func TestHandshake(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name  string
		greet string // written verbatim; the connection then stays open
		close bool   // close right after greet
		want  error  // nil: accepted
	}{
		{"valid", connected + "\n", false, nil},
		{"valid CRLF", connected + "\r\n", false, nil},
		{"extra fields", `{"level":"CONNECTED","message":"x","timestamp":"t","version":1,"agent":"2.0","extra":[1]}` + "\n", false, nil},
		{"whitespace around", ` { "level" : "CONNECTED" , "version" : 1 , "agent" : "a" } ` + "\n", false, nil},
		{"version string", `{"level":"CONNECTED","version":"1","agent":"a"}` + "\n", false, ErrInvalidHandshake},
		{"version 1.0", `{"level":"CONNECTED","version":1.0,"agent":"a"}` + "\n", false, ErrInvalidHandshake},
		{"version 2", `{"level":"CONNECTED","version":2,"agent":"a"}` + "\n", false, ErrInvalidHandshake},
		{"version 0", `{"level":"CONNECTED","version":0,"agent":"a"}` + "\n", false, ErrInvalidHandshake},
		{"version missing", `{"level":"CONNECTED","agent":"a"}` + "\n", false, ErrInvalidHandshake},
		{"agent missing", `{"level":"CONNECTED","version":1}` + "\n", false, ErrInvalidHandshake},
		{"agent blank", `{"level":"CONNECTED","version":1,"agent":"  "}` + "\n", false, ErrInvalidHandshake},
		{"agent number", `{"level":"CONNECTED","version":1,"agent":1}` + "\n", false, ErrInvalidHandshake},
		{"wrong level", `{"level":"INFO","version":1,"agent":"a"}` + "\n", false, ErrInvalidHandshake},
		{"event before CONNECTED", info("hello") + "\n" + connected + "\n", false, ErrInvalidHandshake},
		{"malformed JSON", `{"level":"CONNECTED",` + "\n", false, ErrInvalidHandshake},
		{"array", "[]\n", false, ErrInvalidHandshake},
		{"scalar", "null\n", false, ErrInvalidHandshake},
		{"trailing garbage", connected + " x\n", false, ErrInvalidHandshake},
		{"BOM", "\ufeff" + connected + "\n", false, ErrInvalidHandshake},
		{"close before CONNECTED", "", true, ErrNoHandshake},
		{"truncated then close", `{"level":"CONNEC`, true, ErrNoHandshake},
		{"silence", "", false, ErrNoHandshake},
		{"oversized line", strings.Repeat("x", 20000) + "\n", false, ErrInvalidHandshake},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			done := make(chan struct{})
			port := serve(t, func(p *peer) {
				p.write(tc.greet)
				if !tc.close {
					select {
					case <-done:
					case <-time.After(5 * time.Second):
					}
				}
			})
			defer close(done)
			c, err := Dial(ctxFor(t, 500*time.Millisecond), port)
			if tc.want == nil {
				if err != nil {
					t.Fatalf("Dial: %v", err)
				}
				c.Close()
				return
			}
			if !errors.Is(err, tc.want) {
				t.Fatalf("Dial error = %v, want %v", err, tc.want)
			}
			if err.Error() != tc.want.Error() {
				t.Errorf("error text = %q, want the reason %q", err, tc.want)
			}
		})
	}
}

func TestDialUnreachable(t *testing.T) {
	t.Parallel()
	ln, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := ln.Addr().(*net.TCPAddr).Port
	ln.Close()
	_, err = Dial(ctxFor(t, time.Second), port)
	if !errors.Is(err, ErrUnreachable) {
		t.Fatalf("err = %v, want ErrUnreachable", err)
	}
	if want := "cannot reach the agent on 127.0.0.1:" + strconv.Itoa(port); err.Error() != want {
		t.Errorf("text = %q, want %q", err, want)
	}
}

// An agent in a JVM that prefers IPv6 listens on [::1] only; Dial finds it
// after 127.0.0.1 refuses.
func TestDialFallsBackToIPv6Loopback(t *testing.T) {
	t.Parallel()
	ln, err := net.Listen("tcp6", "[::1]:0")
	if err != nil {
		t.Fatalf("IPv6 loopback is not available here: %v", err)
	}
	defer ln.Close()
	go func() {
		c, err := ln.Accept()
		if err != nil {
			return
		}
		defer c.Close()
		c.Write([]byte(connected + "\n"))
		time.Sleep(time.Second)
	}()
	port := ln.Addr().(*net.TCPAddr).Port
	c, err := Dial(ctxFor(t, 2*time.Second), port)
	if err != nil {
		t.Fatalf("Dial: %v", err)
	}
	defer c.Close()
	if c.Agent() != "1.1.1" {
		t.Errorf("Agent() = %q", c.Agent())
	}
}

func TestCommandCheckedBeforeSending(t *testing.T) {
	t.Parallel()
	got := make(chan string, 1)
	port := serve(t, func(p *peer) {
		p.line(connected)
		got <- p.command()
	})
	c := dial(t, port)
	_, err := c.Query(ctxFor(t, time.Second), "DIAGNOSE "+strings.Repeat("a", 600))
	if !errors.Is(err, ErrInvalidCommand) {
		t.Fatalf("err = %v, want ErrInvalidCommand", err)
	}
	_, err = c.Query(ctxFor(t, time.Second), "DIAGNOSE a\nSCAN")
	if !errors.Is(err, ErrInvalidCommand) {
		t.Fatalf("err = %v, want ErrInvalidCommand", err)
	}
	c.Close()
	if cmd := <-got; cmd != "" {
		t.Errorf("agent received %q; nothing should have been sent", cmd)
	}
}

func TestCancelInterruptsWait(t *testing.T) {
	t.Parallel()
	port := serve(t, func(p *peer) {
		p.line(connected)
		p.command()
		p.command() // returns when the client closes
	})
	c := dial(t, port)
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(50*time.Millisecond, cancel)
	_, err := c.Verify(ctx, "A", strings.Repeat("a", 64))
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v, want context.Canceled", err)
	}
}

// Dialer.HandshakeTimeout gives the handshake its own deadline, counted from
// the moment the connection is up (docs/mcp-server.md#3.3: connect, handshake and
// each command of a session get timeoutMs each): a silent agent ends the
// dial with ErrNoHandshake even when ctx has no deadline.
func TestDialHandshakeTimeout(t *testing.T) {
	t.Parallel()
	done := make(chan struct{})
	port := serve(t, func(p *peer) { <-done })
	defer close(done)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	res := make(chan error, 1)
	go func() {
		c, err := Dialer{ConnectTimeout: time.Second, HandshakeTimeout: 200 * time.Millisecond}.Dial(ctx, port)
		if c != nil {
			c.Close()
		}
		res <- err
	}()
	select {
	case err := <-res:
		if !errors.Is(err, ErrNoHandshake) || !errors.Is(err, os.ErrDeadlineExceeded) {
			t.Fatalf("Dial = %v, want ErrNoHandshake by its deadline", err)
		}
	case <-time.After(10 * time.Second):
		cancel()
		t.Fatalf("Dial with HandshakeTimeout still waiting on a silent agent: %v", <-res)
	}
}

// A cancelled ctx sends nothing: once a verify_batch is cancelled, no further
// VERIFY may reach the agent (docs/mcp-server.md#5), whichever operation comes
// next on the connection.
func TestCancelledContextSendsNothing(t *testing.T) {
	t.Parallel()
	ops := map[string]func(ctx context.Context, c *Conn) error{
		"verify": func(ctx context.Context, c *Conn) error {
			_, err := c.Verify(ctx, "A", strings.Repeat("a", 64))
			return err
		},
		"build":  func(ctx context.Context, c *Conn) error { return c.Build(ctx, BuildStarted, "o") },
		"doctor": func(ctx context.Context, c *Conn) error { _, err := c.Doctor(ctx); return err },
		"reload": func(ctx context.Context, c *Conn) error { _, err := c.Reload(ctx, ReloadStatus); return err },
		"query":  func(ctx context.Context, c *Conn) error { _, err := c.Query(ctx, "PENDING"); return err },
		"scan":   func(ctx context.Context, c *Conn) error { return c.Scan(ctx) },
	}
	for name, op := range ops {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			got := make(chan string, 1)
			port := serve(t, func(p *peer) {
				p.line(connected)
				got <- p.command()
			})
			c := dial(t, port)
			ctx, cancel := context.WithCancel(context.Background())
			cancel()
			if err := op(ctx, c); !errors.Is(err, context.Canceled) {
				t.Errorf("%s with a cancelled ctx = %v, want context.Canceled", name, err)
			}
			c.Close()
			if cmd := <-got; cmd != "" {
				t.Errorf("agent received %q after the cancellation", cmd)
			}
		})
	}
}
