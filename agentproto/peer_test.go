package agentproto

import (
	"bufio"
	"context"
	"net"
	"strings"
	"sync"
	"testing"
	"time"
)

// peer is a scripted agent for one connection: the test's script writes
// exact bytes and reads the client's commands, so every fault of the wire can
// be produced on purpose. The richer fake agent lives in fakeagent.
type peer struct {
	t    *testing.T
	conn net.Conn
	br   *bufio.Reader
}

const connected = `{"level":"CONNECTED","message":"Agent status server connected","timestamp":"2026-09-08T09:12:44.120Z","version":1,"agent":"1.1.1"}`

// info returns an INFO event line carrying msg, escaped as the agent does.
func info(msg string) string {
	r := strings.NewReplacer(`\`, `\\`, `"`, `\"`, "\n", `\n`, "\r", `\r`, "\t", `\t`)
	return `{"level":"INFO","message":"` + r.Replace(msg) + `","timestamp":"2026-09-08T09:12:44Z"}`
}

func (p *peer) write(s string) {
	p.t.Helper()
	if _, err := p.conn.Write([]byte(s)); err != nil {
		p.t.Logf("peer write: %v", err)
	}
}

func (p *peer) line(s string) { p.write(s + "\n") }

// command reads the next command line the client sent ("" on EOF).
func (p *peer) command() string {
	p.conn.SetReadDeadline(time.Now().Add(5 * time.Second))
	s, err := p.br.ReadString('\n')
	if err != nil {
		return ""
	}
	return strings.TrimSuffix(s, "\n")
}

// token returns the request token of a command: the value of request=, or
// the second word (DOCTOR and VERIFY).
func token(cmd string) string {
	f := strings.Fields(cmd)
	for _, w := range f {
		if v, ok := strings.CutPrefix(w, "request="); ok {
			return v
		}
	}
	if len(f) > 1 {
		return f[1]
	}
	return ""
}

// serve starts a loopback listener that runs script for each accepted
// connection and returns its port. Everything is closed at cleanup.
func serve(t *testing.T, script func(p *peer)) int {
	t.Helper()
	ln, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	t.Cleanup(func() { ln.Close(); wg.Wait() })
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			wg.Add(1)
			go func() {
				defer wg.Done()
				defer c.Close()
				script(&peer{t: t, conn: c, br: bufio.NewReader(c)})
			}()
		}
	}()
	return ln.Addr().(*net.TCPAddr).Port
}

// dial connects to port with a short bound, failing the test on error.
func dial(t *testing.T, port int) *Conn {
	t.Helper()
	c, err := Dial(ctxFor(t, 3*time.Second), port)
	if err != nil {
		t.Fatalf("Dial: %v", err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

func ctxFor(t *testing.T, d time.Duration) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	t.Cleanup(cancel)
	return ctx
}
