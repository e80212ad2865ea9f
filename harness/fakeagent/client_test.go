package fakeagent

import (
	"bufio"
	"encoding/json"
	"errors"
	"io"
	"net"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/buildguard/buildguard/agentproto"
)

// limit bounds every blocking step of a test.
const limit = 10 * time.Second

// quiet is a NewServer for tests: no heartbeat unless the test asks.
func quiet(t *testing.T, opts ...Option) *Server {
	t.Helper()
	return NewServer(t, append([]Option{WithHeartbeat(-1)}, opts...)...)
}

// rawClient is a tiny line client of the status socket, independent of the
// agentproto client.
type rawClient struct {
	t  *testing.T
	nc net.Conn
	br *bufio.Reader
	n  int // probe counter
}

// dialRaw connects without reading anything.
func dialRaw(t *testing.T, s *Server) *rawClient {
	t.Helper()
	nc, err := net.DialTimeout("tcp", s.Addr(), limit)
	if err != nil {
		t.Fatalf("dial: %v", err)
	}
	t.Cleanup(func() { nc.Close() })
	return &rawClient{t: t, nc: nc, br: bufio.NewReaderSize(nc, 256<<10)}
}

// dial connects and requires the CONNECTED line.
func dial(t *testing.T, s *Server) *rawClient {
	t.Helper()
	c := dialRaw(t, s)
	ev := c.next()
	if ev.Level != agentproto.LevelConnected {
		t.Fatalf("first line level = %q, want CONNECTED", ev.Level)
	}
	return c
}

// line reads one raw line (terminator removed) within wait.
func (c *rawClient) line() (string, error) {
	c.nc.SetReadDeadline(time.Now().Add(limit))
	l, err := c.br.ReadString('\n')
	if err != nil {
		return l, err
	}
	return strings.TrimSuffix(l, "\n"), nil
}

// event is a decoded agent line.
type event struct {
	Level, Message, Timestamp, Type string
	Raw                             string
}

// next reads and decodes the next line, failing the test on error.
func (c *rawClient) next() event {
	c.t.Helper()
	l, err := c.line()
	if err != nil {
		c.t.Fatalf("reading line: %v (partial %q)", err, l)
	}
	var ev event
	if err := json.Unmarshal([]byte(l), &ev); err != nil {
		c.t.Fatalf("line %q is not JSON: %v", l, err)
	}
	ev.Raw = l
	return ev
}

// send writes a command line with '\n'.
func (c *rawClient) send(cmd string) {
	c.t.Helper()
	if _, err := io.WriteString(c.nc, cmd+"\n"); err != nil {
		c.t.Fatalf("write %q: %v", cmd, err)
	}
}

// probe sends a DOCTOR with a fresh token and returns the messages received
// before its reply: as commands are handled in order, this proves what the
// previous commands produced on this connection (and that they were not
// answered when the slice is empty).
func (c *rawClient) probe() []string {
	c.t.Helper()
	c.n++
	tok := "probe" + strconv.Itoa(c.n)
	c.send("DOCTOR " + tok)
	var got []string
	for {
		ev := c.next()
		if strings.HasPrefix(ev.Message, "DOCTOR_RESULT "+tok+" ") {
			return got
		}
		got = append(got, ev.Message)
	}
}

// expectEOF requires the peer to close (EOF or reset) before any line.
func (c *rawClient) expectClosed() error {
	c.t.Helper()
	c.nc.SetReadDeadline(time.Now().Add(limit))
	b, err := io.ReadAll(c.br)
	if len(b) > 0 {
		c.t.Fatalf("got %q before close", b)
	}
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		c.t.Fatalf("connection not closed within %v", limit)
	}
	return err
}
