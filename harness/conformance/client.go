package conformance

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"net"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/buildguard/buildguard/agentproto"
)

// event is one agent line.
type event struct {
	Level   string
	Message string
	Raw     string
}

func (e event) String() string { return e.Raw }

// client is a raw line client of the status socket. Its methods fail the
// test they are given; every read is bounded by the suite's wait.
type client struct {
	nc   net.Conn
	br   *bufio.Reader
	wait time.Duration
	// agent is the release of the CONNECTED line.
	agent string
}

// connectedRE is the exact CONNECTED line of docs/agent-protocol.md#2.1 and docs/agent-protocol.md#3.1 (fixed field order).
var connectedRE = regexp.MustCompile(`^\{"level":"CONNECTED","message":"Agent status server connected","timestamp":"([^"]*)","version":1,"agent":"((?:[^"\\]|\\.)*)"\}$`)

// timestampRE is Java's Instant.toString(): no fraction, or 3, 6 or 9 digits.
var timestampRE = regexp.MustCompile(`^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{3}|\.\d{6}|\.\d{9})?Z$`)

// eventRE is the common shape of every other line (docs/agent-protocol.md#2.1), with optional
// extra fields after timestamp.
var eventRE = regexp.MustCompile(`^\{"level":"([A-Z_]+)","message":"((?:[^"\\]|\\.)*)","timestamp":"([^"]*)"(,.*)?\}$`)

// errRefused is returned by tryDial when the agent closed the connection
// without a CONNECTED line (the client limit).
var errRefused = errors.New("closed without CONNECTED")

// dial connects and requires the exact CONNECTED line first. The connection
// is closed at the end of t.
func (s *suite) dial(t testing.TB) *client {
	t.Helper()
	c, err := s.tryDial(t)
	if err != nil {
		t.Fatalf("connecting to the agent: %v", err)
	}
	return c
}

// dialRetry is dial for an agent that may still count a connection the
// suite closed a moment ago: a refusal is retried within the wait.
func (s *suite) dialRetry(t testing.TB) *client {
	t.Helper()
	deadline := time.Now().Add(s.wait)
	for {
		c, err := s.tryDial(t)
		if err == nil {
			return c
		}
		if !errors.Is(err, errRefused) || time.Now().After(deadline) {
			t.Fatalf("connecting to the agent: %v", err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func (s *suite) tryDial(t testing.TB) (*client, error) {
	t.Helper()
	nc, err := net.DialTimeout("tcp4", net.JoinHostPort("127.0.0.1", strconv.Itoa(s.agent.Port())), s.wait)
	if err != nil {
		return nil, err
	}
	t.Cleanup(func() { nc.Close() })
	c := &client{nc: nc, br: bufio.NewReader(nc), wait: s.wait}
	line, err := c.readLine()
	if errors.Is(err, io.EOF) {
		nc.Close()
		return nil, errRefused
	}
	if err != nil {
		nc.Close()
		return nil, fmt.Errorf("reading CONNECTED: %w", err)
	}
	m := connectedRE.FindStringSubmatch(line)
	if m == nil {
		nc.Close()
		return nil, fmt.Errorf("first line is not the exact CONNECTED line of docs/agent-protocol.md#3.1: %s", line)
	}
	if !timestampRE.MatchString(m[1]) {
		nc.Close()
		return nil, fmt.Errorf("CONNECTED timestamp %q is not an Instant.toString() value", m[1])
	}
	agent, err := strconv.Unquote(`"` + m[2] + `"`)
	if err != nil || strings.TrimSpace(agent) == "" {
		nc.Close()
		return nil, fmt.Errorf("CONNECTED agent %q is not a non-blank string", m[2])
	}
	c.agent = agent
	return c, nil
}

// readLine reads one line without its terminator. It returns io.EOF when the
// agent closed the connection at a line boundary.
func (c *client) readLine() (string, error) {
	c.nc.SetReadDeadline(time.Now().Add(c.wait))
	line, err := c.br.ReadString('\n')
	if err != nil {
		if errors.Is(err, io.EOF) && line != "" {
			return "", fmt.Errorf("partial line %q before EOF", line)
		}
		return "", err
	}
	return strings.TrimSuffix(strings.TrimSuffix(line, "\n"), "\r"), nil
}

// next reads one event; io.EOF when the agent closed the connection.
func (c *client) next(t testing.TB) (event, error) {
	t.Helper()
	line, err := c.readLine()
	if err != nil {
		return event{}, err
	}
	m := eventRE.FindStringSubmatch(line)
	if m == nil {
		t.Fatalf("agent line does not have the shape of docs/agent-protocol.md#2.1: %s", line)
	}
	if !timestampRE.MatchString(m[3]) {
		t.Fatalf("timestamp %q is not an Instant.toString() value: %s", m[3], line)
	}
	ev, err := agentproto.ParseEvent([]byte(line))
	if err != nil || !ev.HasMessage {
		t.Fatalf("agent line is not a JSON event: %s (%v)", line, err)
	}
	return event{Level: ev.Level, Message: ev.Message, Raw: line}, nil
}

// mustNext is next that fails the test on EOF or a read error.
func (c *client) mustNext(t testing.TB) event {
	t.Helper()
	ev, err := c.next(t)
	if err != nil {
		t.Fatalf("reading an agent line: %v", err)
	}
	return ev
}

// sendRaw writes s as is.
func (c *client) sendRaw(t testing.TB, s string) {
	t.Helper()
	c.nc.SetWriteDeadline(time.Now().Add(c.wait))
	if _, err := io.WriteString(c.nc, s); err != nil {
		t.Fatalf("writing %q: %v", s, err)
	}
}

// send writes one command line terminated by "\n".
func (c *client) send(t testing.TB, line string) { t.Helper(); c.sendRaw(t, line+"\n") }

// await reads until an INFO line whose message starts with prefix and returns
// its message with the lines seen before it (heartbeats left out).
func (c *client) await(t testing.TB, prefix string) (msg string, before []event) {
	t.Helper()
	// Bounded in all: heartbeats alone must not keep the wait alive.
	deadline := time.Now().Add(c.wait)
	for {
		if time.Now().After(deadline) {
			t.Fatalf("no INFO line starting with %q within %v (read %v)", prefix, c.wait, before)
		}
		ev := c.mustNext(t)
		if ev.Level == agentproto.LevelInfo && strings.HasPrefix(ev.Message, prefix) {
			return ev.Message, before
		}
		if ev.Level != agentproto.LevelHeartbeat {
			before = append(before, ev)
		}
	}
}

// request sends cmd and returns the reply message after prefix, with the
// lines that arrived before it.
func (c *client) request(t testing.TB, cmd, prefix string) (rest string, before []event) {
	t.Helper()
	c.send(t, cmd)
	msg, before := c.await(t, prefix)
	return strings.TrimPrefix(msg, prefix), before
}

// fence sends a correlated DOCTOR and returns every line (heartbeats left
// out) that arrived before its reply. The agent handles one connection's
// commands in order, so the reply proves the earlier lines were processed.
func (c *client) fence(t testing.TB) []event {
	t.Helper()
	tok := agentproto.NewToken()
	_, before := c.request(t, "DOCTOR "+tok, "DOCTOR_RESULT "+tok+" ")
	return before
}

// status sends RELOAD status and returns the snapshot after the action.
func (c *client) status(t testing.TB) string {
	t.Helper()
	tok := agentproto.NewToken()
	rest, _ := c.request(t, "RELOAD status request="+tok, "RELOAD_STATE "+tok+" status ")
	return rest
}

// expectEOF reads until the agent closes the connection and returns the
// events read before.
func (c *client) expectEOF(t testing.TB) []event {
	t.Helper()
	var evs []event
	for {
		ev, err := c.next(t)
		if errors.Is(err, io.EOF) || errors.Is(err, net.ErrClosed) || isReset(err) {
			return evs
		}
		if err != nil {
			t.Fatalf("waiting for the agent to close the connection: %v (read %v)", err, evs)
		}
		evs = append(evs, ev)
	}
}

func isReset(err error) bool { return errors.Is(err, syscall.ECONNRESET) }

func (c *client) close() { c.nc.Close() }
