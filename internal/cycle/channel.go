package cycle

import (
	"bufio"
	"context"
	"crypto/rand"
	"crypto/subtle"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/hashicorp/go-hclog"
)

// MaxLine is the longest line either side sends, terminator included.
const MaxLine = 1024

// The files Open writes into its private directory.
const (
	scriptName  = "buildguard-cycles.init.gradle"
	channelName = "channel.properties"
)

// The bounds on connections that have not shown the run's secret yet, so
// that no other process can keep a cycle waiting, exhaust the wrapper's
// descriptors or fill its log (docs/decisions.md#D23).
const (
	// helloTimeout bounds the wait for a new connection's start line; the
	// script sends it as soon as it is connected.
	helloTimeout = 2 * time.Second
	// maxPending is how many connections may await their start line at
	// once; one more closes the one that has waited longest.
	maxPending = 16
	// maxStrangerLogs is how many refused connections (and failed accepts)
	// are logged one by one; the rest are counted, and Close logs the count.
	maxStrangerLogs = 3
)

// writeTimeout bounds each answer to the script.
const writeTimeout = 5 * time.Second

// ErrClosed is returned by Next once the channel is closed.
var ErrClosed = errors.New("cycle channel closed")

// Config configures a Channel.
type Config struct {
	// Script is the init script to apply. Required.
	Script []byte
	// Wait is how long the init script waits for each answer (the start's
	// ack, the finish's answer) before it fails the cycle; 0 means 65 s.
	Wait time.Duration
	// TempDir is where the private directory is created; "" means
	// os.TempDir().
	TempDir string
	// Logger receives debug and warning lines; nil means none.
	Logger hclog.Logger

	// listen replaces net.Listen in tests (fault injection).
	listen func(network, address string) (net.Listener, error)
}

// Channel is one run's cycle channel: a private directory with the init
// script and the channel file, and a loopback listener that accepts the
// script's connections, one per cycle.
type Channel struct {
	dir, script, file string
	secret            string
	lock              *os.File // held (locked) while the run lives; see removeStale
	ln                net.Listener
	log               hclog.Logger

	starts chan *Cycle
	closed chan struct{}
	once   sync.Once
	wg     sync.WaitGroup

	mu        sync.Mutex
	conns     map[net.Conn]struct{}
	pending   []net.Conn    // awaiting their start line, oldest first; at most maxPending
	running   chan struct{} // closed when the running cycle ends (its end read or its last answer sent); nil when none runs
	strangers int           // connections closed without a start with the run's secret
	failures  int           // failed accepts
}

// Open creates the private directory, writes the init script and the
// channel file into it, and starts listening on 127.0.0.1. Close undoes all
// of it.
func Open(cfg Config) (_ *Channel, err error) {
	if len(cfg.Script) == 0 {
		return nil, errors.New("opening the cycle channel: no init script")
	}
	if cfg.Wait <= 0 {
		cfg.Wait = 65 * time.Second
	}
	if cfg.Logger == nil {
		cfg.Logger = hclog.NewNullLogger()
	}
	buf := make([]byte, 32)
	if _, err := rand.Read(buf); err != nil {
		return nil, fmt.Errorf("opening the cycle channel: %w", err)
	}
	removeStale(cfg.TempDir, cfg.Logger)
	dir, err := os.MkdirTemp(cfg.TempDir, dirPrefix)
	if err != nil {
		return nil, fmt.Errorf("opening the cycle channel: %w", err)
	}
	c := &Channel{
		dir:    dir,
		script: filepath.Join(dir, scriptName),
		file:   filepath.Join(dir, channelName),
		secret: hex.EncodeToString(buf),
		log:    cfg.Logger,
		starts: make(chan *Cycle),
		closed: make(chan struct{}),
		conns:  map[net.Conn]struct{}{},
	}
	defer func() {
		if err != nil {
			c.removeFiles()
		}
	}()
	if c.lock, err = holdLock(filepath.Join(dir, lockName)); err != nil {
		return nil, fmt.Errorf("opening the cycle channel: %w", err)
	}
	if err := os.WriteFile(c.script, cfg.Script, 0o600); err != nil {
		return nil, fmt.Errorf("opening the cycle channel: %w", err)
	}
	if cfg.listen == nil {
		cfg.listen = net.Listen
	}
	ln, err := cfg.listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("opening the cycle channel: %w", err)
	}
	port := ln.Addr().(*net.TCPAddr).Port
	props := fmt.Sprintf("# buildguard continuous build: the cycle channel of one run; private to it\nport=%d\nsecret=%s\nwaitMs=%d\n",
		port, c.secret, cfg.Wait.Milliseconds())
	if err := os.WriteFile(c.file, []byte(props), 0o600); err != nil {
		ln.Close()
		return nil, fmt.Errorf("opening the cycle channel: %w", err)
	}
	c.ln = ln
	c.wg.Add(1)
	go c.accept()
	return c, nil
}

// Argv returns argv with the init script and the channel applied: the
// user's options unchanged, then --init-script, the channel property and
// the configuration cache turned off, then the "--" that ends Gradle's
// options and what follows it, when argv has one (after it, Gradle would
// take them for task arguments).
func (c *Channel) Argv(argv []string) []string {
	end := len(argv)
	if len(argv) > 0 {
		end = 1 + parseGradle(argv[1:]).end
	}
	out := append([]string(nil), argv[:end]...)
	out = append(out, "--init-script", c.script, "-P"+ChannelProperty+"="+c.file, noConfigurationCache)
	return append(out, argv[end:]...)
}

// Next waits for the next cycle's start, from a connection that presented
// the run's secret. It returns ErrClosed once the channel is closed, or
// ctx's error.
func (c *Channel) Next(ctx context.Context) (*Cycle, error) {
	select {
	case cy := <-c.starts:
		return cy, nil
	case <-c.closed:
		return nil, ErrClosed
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// Close stops listening, closes every cycle connection (a script waiting
// on one then fails its cycle or gives up on its finish), waits for the
// connection handlers and removes the directory Open created. It is
// idempotent.
func (c *Channel) Close() error {
	c.once.Do(func() {
		close(c.closed)
		c.ln.Close()
		c.mu.Lock()
		for nc := range c.conns {
			nc.Close()
		}
		c.mu.Unlock()
		c.wg.Wait()
		c.removeFiles()
		if c.strangers > maxStrangerLogs {
			c.log.Warn("closed connections to the cycle channel that did not start a cycle with this run's secret", "count", c.strangers)
		}
		if c.failures > maxStrangerLogs {
			c.log.Warn("accepts on the cycle channel failed", "count", c.failures)
		}
	})
	return nil
}

// removeFiles lets go of the lock and deletes the files Open wrote and its
// directory, nothing else: a directory someone else filled stays.
func (c *Channel) removeFiles() {
	if c.lock != nil {
		c.lock.Close() // before its removal: Windows keeps an open file
	}
	for _, p := range []string{c.script, c.file, filepath.Join(c.dir, lockName)} {
		if err := os.Remove(p); err != nil && !errors.Is(err, os.ErrNotExist) {
			c.log.Warn("removing a cycle channel file failed", "path", p, "error", err)
		}
	}
	if err := os.Remove(c.dir); err != nil && !errors.Is(err, os.ErrNotExist) {
		c.log.Warn("removing the cycle channel directory failed", "path", c.dir, "error", err)
	}
}

// accept accepts connections until the channel is closed. A failed accept
// (out of descriptors, a connection aborted before it was accepted) is
// tried again after a pause that doubles up to a second: the build's own
// connection must still get in.
func (c *Channel) accept() {
	defer c.wg.Done()
	var pause time.Duration
	for {
		nc, err := c.ln.Accept()
		if err != nil {
			if c.isClosed() {
				return
			}
			pause = min(max(2*pause, 5*time.Millisecond), time.Second)
			if c.count(&c.failures) <= maxStrangerLogs {
				c.log.Warn("accepting a cycle connection failed; trying again", "error", err, "pause", pause)
			}
			select {
			case <-time.After(pause):
			case <-c.closed:
				return
			}
			continue
		}
		pause = 0
		if !c.track(nc) {
			nc.Close()
			return
		}
		c.wg.Add(1)
		go c.hello(nc)
	}
}

func (c *Channel) isClosed() bool {
	select {
	case <-c.closed:
		return true
	default:
		return false
	}
}

// count adds one to *n under the lock and returns it.
func (c *Channel) count(n *int) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	*n++
	return *n
}

// track registers nc for Close, as awaiting its start line; when
// maxPending connections already await theirs, the oldest is closed. It
// returns false when the channel is already closed.
func (c *Channel) track(nc net.Conn) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.isClosed() {
		return false
	}
	if len(c.pending) >= maxPending {
		c.pending[0].Close() // its hello sees the error and untracks it
		c.pending = c.pending[1:]
	}
	c.pending = append(c.pending, nc)
	c.conns[nc] = struct{}{}
	return true
}

// started takes nc off the pending list once it sent a valid start; false
// when it was closed as the oldest pending one first.
func (c *Channel) started(nc net.Conn) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.unpend(nc)
}

// unpend takes nc off the pending list; false when it was not on it. The
// caller holds c.mu.
func (c *Channel) unpend(nc net.Conn) bool {
	i := slices.Index(c.pending, nc)
	if i < 0 {
		return false
	}
	c.pending = slices.Delete(c.pending, i, i+1)
	return true
}

func (c *Channel) untrack(nc net.Conn) {
	c.mu.Lock()
	c.unpend(nc)
	delete(c.conns, nc)
	c.mu.Unlock()
	nc.Close()
}

// hello reads a connection's start line and hands the cycle to Next; a
// connection without the run's secret is closed unanswered.
func (c *Channel) hello(nc net.Conn) {
	defer c.wg.Done()
	nc.SetReadDeadline(time.Now().Add(helloTimeout))
	br := bufio.NewReaderSize(nc, MaxLine)
	line, err := readLine(br)
	if err != nil || !c.validStart(line) || !c.started(nc) {
		c.stranger(nc, err)
		return
	}
	nc.SetReadDeadline(time.Time{})
	if !c.claim() {
		select {
		case <-c.closed:
			// The run ends: the start is not a second application.
			c.untrack(nc)
			return
		default:
		}
		// The script applied twice to one build: the second start would
		// wait for the end of the first, which waits for the second.
		// Refused within helloTimeout.
		c.log.Warn("a second cycle started while one runs: the cycle init script is applied twice; refused it")
		second := &Cycle{nc: nc, br: br, done: func() { c.untrack(nc) }}
		second.Refuse(errTwice)
		return
	}
	cy := &Cycle{nc: nc, br: br, done: func() { c.untrack(nc) }, end: c.release}
	select {
	case c.starts <- cy:
	case <-c.closed:
		cy.Close()
	}
}

// stranger closes nc, which did not start a cycle with the run's secret
// (err is why, when reading failed), and logs it if it is one of the first
// maxStrangerLogs.
func (c *Channel) stranger(nc net.Conn, err error) {
	switch n := c.count(&c.strangers); {
	case n <= maxStrangerLogs:
		c.log.Warn("a connection to the cycle channel did not start a cycle with this run's secret; closed it", "remote", nc.RemoteAddr().String(), "error", err)
	case n == maxStrangerLogs+1:
		c.log.Warn("more connections to the cycle channel without this run's secret; closing them, counted but not logged one by one")
	}
	c.untrack(nc)
}

// errTwice is the refusal of a start that arrives while a cycle runs.
const errTwice = "a cycle of this run is already running: the buildguard cycles init script is applied twice to this build " +
	"(a copy in ~/.gradle/init.d/ or a second --init-script); remove the copy, buildguard applies the script itself"

// claim marks a cycle as running, until Result has read its end or its
// last answer is sent (Finish, Refuse, Close). While another cycle runs it
// waits up to helloTimeout for that one to end: a script whose connection
// broke goes on to its next cycle, whose start may come before Result has
// read the end of the last. It returns false when the other cycle does not
// end: the script is applied twice to one build, and the first
// application's cycle waits for the second's.
func (c *Channel) claim() bool {
	deadline := time.NewTimer(helloTimeout)
	defer deadline.Stop()
	for {
		c.mu.Lock()
		running := c.running
		if running == nil {
			c.running = make(chan struct{})
		}
		c.mu.Unlock()
		if running == nil {
			return true
		}
		select {
		case <-running:
		case <-deadline.C:
			return false
		case <-c.closed:
			return false
		}
	}
}

// release marks the running cycle as ended.
func (c *Channel) release() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.running != nil {
		close(c.running)
		c.running = nil
	}
}

// validStart reports whether line is a start with the run's secret.
func (c *Channel) validStart(line string) bool {
	f := strings.Fields(line)
	if len(f) != 4 || f[0] != "buildguard-cycle" || f[1] != "1" || f[3] != "start" {
		return false
	}
	return subtle.ConstantTimeCompare([]byte(f[2]), []byte(c.secret)) == 1
}

// readLine reads one line of at most MaxLine bytes and returns it without
// its terminator.
func readLine(br *bufio.Reader) (string, error) {
	line, err := br.ReadSlice('\n')
	switch {
	case errors.Is(err, bufio.ErrBufferFull):
		return "", errors.New("line too long")
	case err != nil:
		return "", err
	}
	return strings.TrimSuffix(strings.TrimSuffix(string(line), "\n"), "\r"), nil
}

// Result is how the script reported a cycle's end.
type Result int

const (
	// Failed: the script reported `finish failed`.
	Failed Result = iota
	// OK: the script reported `finish ok`.
	OK
	// Lost: the connection ended, or sent something else, before a finish
	// line; the cycle counts as failed.
	Lost
)

func (r Result) String() string {
	switch r {
	case OK:
		return "ok"
	case Lost:
		return "lost"
	}
	return "failed"
}

// Cycle is one cycle's connection, from its start to its end.
type Cycle struct {
	nc   net.Conn
	br   *bufio.Reader
	done func()
	once sync.Once
	// end, when not nil, marks the cycle ended for the channel, once, when
	// the script's finish (or its leaving) has been read, and at the
	// latest before the last answer: the script may start the next cycle
	// as soon as it has read that.
	end     func()
	endOnce sync.Once
}

// ended marks the cycle ended for the channel.
func (cy *Cycle) ended() {
	if cy.end != nil {
		cy.endOnce.Do(cy.end)
	}
}

func (cy *Cycle) write(line string) error {
	cy.nc.SetWriteDeadline(time.Now().Add(writeTimeout))
	_, err := io.WriteString(cy.nc, line+"\n")
	return err
}

// Ack tells the script that the hold for cycle n is acknowledged: its
// tasks may run.
func (cy *Cycle) Ack(n int) error { return cy.write("ack " + strconv.Itoa(n)) }

// Refuse tells the script why the cycle may not run (the script fails it
// before any task) and closes the connection. reason is cut to one line.
func (cy *Cycle) Refuse(reason string) error {
	reason = strings.Join(strings.Fields(reason), " ")
	if max := MaxLine - len("refused \n"); len(reason) > max {
		reason = reason[:max]
	}
	cy.ended()
	err := cy.write("refused " + reason)
	cy.Close()
	return err
}

// Result waits for the script's finish line. It returns Lost when the
// connection ends or breaks the protocol first, and ctx's error when ctx
// ends first.
func (cy *Cycle) Result(ctx context.Context) (Result, error) {
	stop := context.AfterFunc(ctx, func() { cy.nc.SetReadDeadline(time.Unix(1, 0)) })
	defer stop()
	line, err := readLine(cy.br)
	if ctx.Err() != nil {
		return Lost, ctx.Err()
	}
	// The script sent its finish or left: a start from now on is the next
	// cycle's (the script gives up on an answer after waitMs and Gradle
	// goes on), not a second application's, which comes before any finish.
	cy.ended()
	switch {
	case err != nil:
		return Lost, nil
	case line == "finish ok":
		return OK, nil
	case line == "finish failed":
		return Failed, nil
	}
	return Lost, nil
}

// Finish tells the script how the agent was told (released: `BUILD ok`
// acknowledged; otherwise the output stays held) and closes the connection.
func (cy *Cycle) Finish(n int, released bool) error {
	word := "held "
	if released {
		word = "released "
	}
	cy.ended()
	err := cy.write(word + strconv.Itoa(n))
	cy.Close()
	return err
}

// Close closes the connection; it is idempotent.
func (cy *Cycle) Close() {
	cy.ended()
	cy.once.Do(cy.done)
}
