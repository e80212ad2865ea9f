package fakeagent

import (
	"bufio"
	"errors"
	"io"
	"net"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/buildguard/buildguard/agentproto"
)

// outItem is one unit of the outbox: bytes written in one go (a line with its
// terminator, several coalesced lines, or a fragment), plus what to do after.
type outItem struct {
	data       string
	trickle    bool // write in small separate writes
	endless    bool // keep writing without ever ending the line
	closeAfter bool // close the connection after writing
	rst        bool // close abortively (SO_LINGER 0)
}

// conn is one client connection: a reader that dispatches commands in order
// and a writer draining a bounded outbox (docs/agent-protocol.md#1.4, docs/agent-protocol.md#1.5).
type conn struct {
	s    *Server
	id   int
	nc   net.Conn
	out  chan outItem
	done chan struct{}
	dead atomic.Bool
	once sync.Once

	dropMu sync.Mutex
	drops  int

	commands []string      // guarded by s.connMu
	gate     chan struct{} // guarded by s.connMu; the writer waits while non-nil
}

func newConn(s *Server, id int, nc net.Conn) *conn {
	return &conn{s: s, id: id, nc: nc, out: make(chan outItem, s.cfg.Outbox), done: make(chan struct{})}
}

// close marks the connection dead and closes the socket; rst makes it abortive.
func (c *conn) close(rst bool) {
	c.once.Do(func() {
		c.dead.Store(true)
		if tc, ok := c.nc.(*net.TCPConn); ok && rst {
			_ = tc.SetLinger(0)
		}
		c.nc.Close()
		close(c.done)
		c.s.notify()
	})
}

// offer puts an item in the outbox without blocking; it reports false when
// the outbox is full (the item is dropped) or the connection is dead.
func (c *conn) offer(it outItem) (full bool) {
	if c.dead.Load() {
		return false
	}
	select {
	case c.out <- it:
		return false
	default:
		return true
	}
}

// enqueue offers an item and, when it is dropped, counts the drop and
// broadcasts the back-pressure WARN on the 1st and every 1000th drop (docs/agent-protocol.md#1.5).
func (c *conn) enqueue(it outItem) {
	if !c.offer(it) {
		return
	}
	c.dropMu.Lock()
	c.drops++
	n := c.drops
	c.dropMu.Unlock()
	if n == 1 || n%1000 == 0 {
		c.s.broadcast(agentproto.LevelWarn, dropWarning(n))
	}
}

// dropWarning is the back-pressure WARN text for n dropped events.
func dropWarning(n int) string {
	ev := "events"
	if n == 1 {
		ev = "event"
	}
	return "Status client is not keeping up — dropped " + strconv.Itoa(n) + " " + ev + ". Reload is unaffected."
}

// Drops returns how many lines were dropped for each registered connection
// (index 0 is connection id 1).
func (s *Server) Drops() []int {
	s.connMu.Lock()
	all := append([]*conn(nil), s.all...)
	s.connMu.Unlock()
	out := make([]int, len(all))
	for i, c := range all {
		c.dropMu.Lock()
		out[i] = c.drops
		c.dropMu.Unlock()
	}
	return out
}

// writeLoop writes outbox items one at a time until the connection dies;
// items still queued then are discarded, as in the agent.
func (c *conn) writeLoop() {
	defer c.s.wg.Done()
	for {
		select {
		case <-c.done:
			return
		case it := <-c.out:
			if g := c.s.writerGate(c); g != nil {
				select {
				case <-g:
				case <-c.done:
					return
				}
			}
			if c.dead.Load() {
				return
			}
			if err := c.write(it); err != nil {
				c.close(false)
				return
			}
			if it.closeAfter {
				c.close(it.rst)
				return
			}
		}
	}
}

// trickleGap spaces the small writes of a trickled reply so they leave as
// separate segments.
const trickleGap = time.Millisecond

// write performs one outbox item.
func (c *conn) write(it outItem) error {
	if it.trickle || it.endless {
		for i := 0; i < len(it.data); i += 3 {
			end := min(i+3, len(it.data))
			if _, err := io.WriteString(c.nc, it.data[i:end]); err != nil {
				return err
			}
			if !c.pause(trickleGap) {
				return net.ErrClosed
			}
		}
		for it.endless {
			if _, err := io.WriteString(c.nc, "x"); err != nil {
				return err
			}
			if !c.pause(10 * time.Millisecond) {
				return net.ErrClosed
			}
		}
		return nil
	}
	if it.data == "" {
		return nil
	}
	_, err := io.WriteString(c.nc, it.data)
	return err
}

// pause waits d unless the connection closes first; it reports whether the
// connection is still open.
func (c *conn) pause(d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-c.done:
		return false
	}
}

// readLoop is the docs/agent-protocol.md#1.4 line reader: '\n' ends a line, '\r' is dropped
// anywhere, the 513th UTF-16 unit closes the connection silently, and at EOF a
// non-empty partial line is processed before the connection closes.
func (c *conn) readLoop(stopReading bool) {
	defer c.s.wg.Done()
	if stopReading {
		<-c.done
		return
	}
	br := bufio.NewReader(c.nc)
	var line strings.Builder
	units := 0
	for {
		r, err := readJavaRune(br)
		if err != nil {
			if errors.Is(err, io.EOF) && line.Len() > 0 && !c.dead.Load() {
				c.s.handle(c, line.String())
			}
			c.close(false)
			return
		}
		switch r {
		case '\r':
			continue
		case '\n':
			l := line.String()
			line.Reset()
			units = 0
			if c.dead.Load() {
				return
			}
			c.s.handle(c, l)
			continue
		}
		u := agentproto.UTF16RuneLen(r)
		if units+u > agentproto.MaxCommandChars {
			c.close(false)
			return
		}
		units += u
		line.WriteRune(r)
	}
}
