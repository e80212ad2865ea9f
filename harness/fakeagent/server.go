package fakeagent

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/buildguard/buildguard/agentproto"
)

// Server is a running fake agent. Its methods are safe for concurrent use.
type Server struct {
	cfg      Config
	ln       net.Listener
	port     int
	portFile string
	dir      string // base directory of NewServer ("" for Start)

	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup

	closeOnce     sync.Once
	leavePortFile atomic.Bool
	portWritten   atomic.Bool

	// connMu guards the connection registry, the command log and the change
	// notification. Lock order: mu before connMu; never the other way round.
	connMu   sync.Mutex
	conns    []*conn // live or not yet pruned
	all      []*conn // every registered connection, in accept order
	nextID   int
	rejected int
	accepted int
	commands []Command
	changed  chan struct{}
	timers   []*time.Timer // delayed replies, stopped by Close

	// mu guards the agent state below.
	mu         sync.Mutex
	unwired    Unwired
	session    string
	evidence   Evidence
	hold       holdState
	holdTimer  *time.Timer
	paused     bool
	pauseEpoch int
	pending    []pendingClass
	extraClass int
	actions    int
	ledger     ledger
	restart    []string
	reloads    int
	structural int
	accepting  int
	startedAt  time.Time
	faults     Faults
	health     []string
	diagnose   func(name string) []string
	acceptance func(ctx context.Context, owner string) Outcome

	// taskMu guards the reload-thread queue; it may be taken under mu.
	taskMu   sync.Mutex
	tasks    []func()
	taskWake chan struct{}
}

// Command is one command line as the agent read it (without '\r' and the
// newline, before stripping) and the id of the connection that sent it.
type Command struct {
	Conn int
	Line string
}

// NewServer starts a fake agent for a test on 127.0.0.1:0, writes its port to
// <t.TempDir()>/.reclazz/agent.port (unless an option sets another path) and
// closes it in t.Cleanup. It fails the test if the server cannot start.
func NewServer(t testing.TB, opts ...Option) *Server {
	t.Helper()
	var cfg Config
	for _, o := range opts {
		o(&cfg)
	}
	dir := t.TempDir()
	switch cfg.PortFile {
	case "":
		cfg.PortFile = defaultPortFile(dir)
	case noPortFile:
		cfg.PortFile = ""
	}
	if cfg.Doctor.WorkingDirectory == "" {
		cfg.Doctor.WorkingDirectory = dir
	}
	if cfg.Logf == nil {
		cfg.Logf = t.Logf
	}
	s, err := Start(cfg)
	if err != nil {
		t.Fatalf("fakeagent: starting fake agent: %v", err)
	}
	s.dir = dir
	t.Cleanup(s.Close)
	return s
}

// Start starts a fake agent from cfg outside a test (for a separate process,
// see [Main]). The caller must Close it.
func Start(cfg Config) (*Server, error) {
	if cfg.Host == "" {
		cfg.Host = "127.0.0.1"
	}
	if cfg.Agent == "" {
		cfg.Agent = DefaultAgent
	}
	if cfg.EOL == "" {
		cfg.EOL = "\n"
	}
	if cfg.Heartbeat == 0 {
		cfg.Heartbeat = DefaultHeartbeat
	}
	if cfg.HoldWarning == 0 {
		cfg.HoldWarning = DefaultHoldWarning
	}
	if cfg.Outbox <= 0 {
		cfg.Outbox = DefaultOutbox
	}
	if cfg.MaxClients <= 0 {
		cfg.MaxClients = DefaultMaxClients
	}
	if cfg.SessionID == "" {
		cfg.SessionID = agentproto.NewToken()
	}
	if cfg.Logf == nil {
		cfg.Logf = func(string, ...any) {}
	}
	if cfg.Doctor.WorkingDirectory == "" {
		if wd, err := os.Getwd(); err == nil {
			cfg.Doctor.WorkingDirectory = wd
		}
	}
	ln, err := net.Listen("tcp", net.JoinHostPort(cfg.Host, strconv.Itoa(cfg.Port)))
	if err != nil {
		return nil, fmt.Errorf("listening on %s port %d: %w", cfg.Host, cfg.Port, err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	s := &Server{
		cfg:        cfg,
		ln:         ln,
		port:       ln.Addr().(*net.TCPAddr).Port,
		portFile:   cfg.PortFile,
		ctx:        ctx,
		cancel:     cancel,
		changed:    make(chan struct{}),
		unwired:    cfg.Unwired,
		session:    cfg.SessionID,
		evidence:   cfg.Doctor,
		paused:     cfg.Paused,
		actions:    cfg.PendingActions,
		restart:    append([]string(nil), cfg.RestartLedger...),
		startedAt:  time.Now(),
		faults:     cfg.Faults,
		acceptance: cfg.Acceptance,
		taskWake:   make(chan struct{}, 1),
	}
	if cfg.Paused {
		s.pauseEpoch = 1
	}
	if cfg.Hold.Holding {
		s.hold = holdState{holding: true, owner: cfg.Hold.Owner, generation: 1, since: now()}
		s.armHoldWarningLocked()
	}
	if cfg.PortFile != "" {
		if err := s.writePortFile(); err != nil {
			ln.Close()
			cancel()
			return nil, err
		}
	}
	s.wg.Add(2)
	go s.acceptLoop()
	go s.taskLoop()
	if cfg.Heartbeat > 0 {
		s.wg.Add(1)
		go s.heartbeatLoop(cfg.Heartbeat)
	}
	return s, nil
}

// writePortFile writes the port like the agent: a temp file in the same
// directory, renamed over the target; a symlink target is refused.
func (s *Server) writePortFile() error {
	path := s.portFile
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("creating port file directory: %w", err)
	}
	if fi, err := os.Lstat(path); err == nil && fi.Mode()&fs.ModeSymlink != 0 {
		s.cfg.Logf("fakeagent: Port file is a symlink — refusing to write: %s", path)
		return nil
	}
	var rnd [8]byte
	_, _ = rand.Read(rnd[:])
	tmp := filepath.Join(dir, "."+filepath.Base(path)+hex.EncodeToString(rnd[:])+".reclazz-tmp")
	if err := os.WriteFile(tmp, []byte(strconv.Itoa(s.port)), 0o644); err != nil {
		return fmt.Errorf("writing port file: %w", err)
	}
	if err := os.Rename(tmp, path); err != nil {
		os.Remove(tmp)
		return fmt.Errorf("writing port file: %w", err)
	}
	s.portWritten.Store(true)
	return nil
}

// Close stops the agent: the listener and every connection close, background
// work ends, and the port file is deleted. It is idempotent.
func (s *Server) Close() {
	s.closeOnce.Do(func() {
		s.cancel()
		s.ln.Close()
		s.connMu.Lock()
		conns := append([]*conn(nil), s.all...)
		for _, tm := range s.timers {
			tm.Stop()
		}
		s.connMu.Unlock()
		for _, c := range conns {
			c.close(false)
		}
		s.mu.Lock()
		if s.holdTimer != nil {
			s.holdTimer.Stop()
		}
		s.mu.Unlock()
		s.wg.Wait()
		if s.portWritten.Load() && !s.leavePortFile.Load() {
			os.Remove(s.portFile)
		}
		s.notify()
	})
}

// Stop closes the agent; leavePortFile keeps the port file behind, as after a
// crash (stale port file).
func (s *Server) Stop(leavePortFile bool) {
	s.leavePortFile.Store(leavePortFile)
	s.Close()
}

// WritePortFile (re)writes the port file with the agent's port, e.g. after a
// test deleted or replaced it.
func (s *Server) WritePortFile() error {
	if s.portFile == "" {
		return errors.New("no port file configured")
	}
	return s.writePortFile()
}

// RemovePortFile deletes the port file while the agent keeps serving (a port
// file deleted mid-session, or one the other JVM's stop removed).
func (s *Server) RemovePortFile() error {
	if s.portFile == "" {
		return nil
	}
	s.portWritten.Store(false)
	if err := os.Remove(s.portFile); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("removing port file: %w", err)
	}
	return nil
}

// Port is the TCP port the agent listens on.
func (s *Server) Port() int { return s.port }

// Addr is the listening address, e.g. "127.0.0.1:53817".
func (s *Server) Addr() string { return s.ln.Addr().String() }

// PortFile is the port file path ("" when none is written).
func (s *Server) PortFile() string { return s.portFile }

// PortFileWritten reports whether the port file was written (false when the
// path was a symlink or no port file was configured).
func (s *Server) PortFileWritten() bool { return s.portWritten.Load() }

// Dir is the NewServer base directory holding .reclazz/agent.port, which is
// also the DOCTOR workingDirectory unless set otherwise ("" for Start).
func (s *Server) Dir() string { return s.dir }

// Agent is the release string sent in CONNECTED.
func (s *Server) Agent() string { return s.cfg.Agent }

// notify wakes every waiter to re-check its condition.
func (s *Server) notify() {
	s.connMu.Lock()
	close(s.changed)
	s.changed = make(chan struct{})
	s.connMu.Unlock()
}

// waitFor blocks until cond holds or ctx ends; cond is evaluated without locks held.
func (s *Server) waitFor(ctx context.Context, what string, cond func() bool) error {
	for {
		s.connMu.Lock()
		ch := s.changed
		s.connMu.Unlock()
		if cond() {
			return nil
		}
		select {
		case <-ch:
		case <-ctx.Done():
			return fmt.Errorf("waiting for %s: %w", what, ctx.Err())
		}
	}
}

// acceptLoop accepts connections until the listener closes.
func (s *Server) acceptLoop() {
	defer s.wg.Done()
	for {
		nc, err := s.ln.Accept()
		if err != nil {
			if errors.Is(err, net.ErrClosed) || s.ctx.Err() != nil {
				return
			}
			continue
		}
		s.register(nc)
	}
}

// register admits a connection (or refuses it beyond MaxClients) and starts
// its reader and writer, with the handshake already queued.
func (s *Server) register(nc net.Conn) {
	s.mu.Lock()
	f := s.faults
	s.mu.Unlock()
	s.connMu.Lock()
	live := s.conns[:0]
	for _, c := range s.conns {
		if !c.dead.Load() {
			live = append(live, c)
		}
	}
	for i := len(live); i < len(s.conns); i++ {
		s.conns[i] = nil
	}
	s.conns = live
	if len(live) >= s.cfg.MaxClients || s.ctx.Err() != nil {
		s.rejected++
		s.connMu.Unlock()
		nc.Close()
		s.notify()
		return
	}
	s.nextID++
	s.accepted++
	c := newConn(s, s.nextID, nc)
	s.conns = append(s.conns, c)
	s.all = append(s.all, c)
	if f.HandshakeDelay <= 0 {
		s.queueHandshake(c, f)
	}
	s.connMu.Unlock()
	s.notify()
	s.wg.Add(2)
	go c.writeLoop()
	// A connection closed right after CONNECTED handles no command: without
	// this, a command the client sends at once could race the close.
	go c.readLoop(f.StopReading || f.DisconnectAfterHandshake)
	if f.HandshakeDelay > 0 {
		s.wg.Add(1)
		go func() {
			defer s.wg.Done()
			t := time.NewTimer(f.HandshakeDelay)
			defer t.Stop()
			select {
			case <-t.C:
				s.queueHandshake(c, f)
			case <-c.done:
			}
		}()
	}
}

// queueHandshake enqueues the CONNECTED line, or the configured fault.
func (s *Server) queueHandshake(c *conn, f Faults) {
	lines, partial, closeAfter := handshakeLines(f.Handshake, s.cfg.Agent, now())
	// offer, not enqueue: this may run under connMu, and a fresh outbox only
	// overflows when it is configured smaller than the handshake.
	for _, l := range lines {
		c.offer(outItem{data: l + s.cfg.EOL})
	}
	if partial != "" {
		c.offer(outItem{data: partial})
	}
	if closeAfter || f.DisconnectAfterHandshake {
		c.offer(outItem{closeAfter: true, rst: f.RST})
	}
}

// liveConns returns the connections that are still open.
func (s *Server) liveConns() []*conn {
	s.connMu.Lock()
	defer s.connMu.Unlock()
	out := make([]*conn, 0, len(s.conns))
	for _, c := range s.conns {
		if !c.dead.Load() {
			out = append(out, c)
		}
	}
	return out
}

// broadcast sends one event to every live connection.
func (s *Server) broadcast(level, message string) {
	line := EncodeLine(level, message, now()) + s.cfg.EOL
	for _, c := range s.liveConns() {
		c.enqueue(outItem{data: line})
	}
}

// Emit broadcasts an event to every connected client with the agent's exact
// escaping and truncation (docs/agent-protocol.md#2.3); STRUCTURAL_RELOAD lines get
// "type":"structural".
func (s *Server) Emit(level, message string) { s.broadcast(level, message) }

// EmitRaw writes a line verbatim (plus the line terminator) to every client,
// for lines the agent would never produce.
func (s *Server) EmitRaw(line string) {
	for _, c := range s.liveConns() {
		c.enqueue(outItem{data: line + s.cfg.EOL})
	}
}

// heartbeatLoop sends HEARTBEAT at a fixed rate while a client is connected.
func (s *Server) heartbeatLoop(d time.Duration) {
	defer s.wg.Done()
	t := time.NewTicker(d)
	defer t.Stop()
	for {
		select {
		case <-s.ctx.Done():
			return
		case <-t.C:
			if len(s.liveConns()) > 0 {
				s.broadcast(agentproto.LevelHeartbeat, "")
			}
		}
	}
}

// submit queues work for the single reload goroutine.
func (s *Server) submit(f func()) {
	s.taskMu.Lock()
	s.tasks = append(s.tasks, f)
	s.taskMu.Unlock()
	select {
	case s.taskWake <- struct{}{}:
	default:
	}
}

// taskLoop is the agent's reload thread: it runs submitted work in order.
func (s *Server) taskLoop() {
	defer s.wg.Done()
	for {
		s.taskMu.Lock()
		var f func()
		if len(s.tasks) > 0 {
			f = s.tasks[0]
			s.tasks[0] = nil
			s.tasks = s.tasks[1:]
		}
		s.taskMu.Unlock()
		if f != nil {
			f()
			continue
		}
		select {
		case <-s.ctx.Done():
			return
		case <-s.taskWake:
		}
	}
}

// Sync waits until the asynchronous work queued so far (acceptances of
// `BUILD ok`, scans, resumes) has finished, or ctx ends.
func (s *Server) Sync(ctx context.Context) error {
	done := make(chan struct{})
	s.submit(func() { close(done) })
	select {
	case <-done:
		return nil
	case <-ctx.Done():
		return fmt.Errorf("waiting for the agent's reload thread: %w", ctx.Err())
	case <-s.ctx.Done():
		return errors.New("agent closed")
	}
}

// HoldWriters stops the writer of every live connection before its next
// line, so lines pile up in the outboxes (and are dropped once full). The
// returned function lets them go on; it is idempotent. A writer may already
// hold one dequeued line when it stops.
func (s *Server) HoldWriters() (release func()) {
	var rel []func()
	for _, c := range s.liveConns() {
		rel = append(rel, s.HoldWriter(c.id))
	}
	return func() {
		for _, r := range rel {
			r()
		}
	}
}

// HoldWriter stops the writer of connection id (1-based, accept order) before
// its next line; see HoldWriters.
func (s *Server) HoldWriter(id int) (release func()) {
	s.connMu.Lock()
	var c *conn
	if id >= 1 && id <= len(s.all) {
		c = s.all[id-1]
	}
	var g chan struct{}
	if c != nil {
		if c.gate == nil {
			c.gate = make(chan struct{})
		}
		g = c.gate
	}
	s.connMu.Unlock()
	var once sync.Once
	return func() {
		once.Do(func() {
			if c == nil {
				return
			}
			s.connMu.Lock()
			if c.gate == g {
				close(g)
				c.gate = nil
			}
			s.connMu.Unlock()
		})
	}
}

// writerGate returns the channel c's writer must wait on, or nil.
func (s *Server) writerGate(c *conn) chan struct{} {
	s.connMu.Lock()
	defer s.connMu.Unlock()
	return c.gate
}

// record appends a received command line to the log.
func (s *Server) record(c *conn, line string) {
	s.connMu.Lock()
	s.commands = append(s.commands, Command{Conn: c.id, Line: line})
	c.commands = append(c.commands, line)
	s.connMu.Unlock()
	s.notify()
	if s.cfg.OnCommand != nil {
		s.cfg.OnCommand(c.id, line)
	}
}

// Commands returns every command line received, in arrival order across all
// connections.
func (s *Server) Commands() []string {
	s.connMu.Lock()
	defer s.connMu.Unlock()
	out := make([]string, len(s.commands))
	for i, c := range s.commands {
		out[i] = c.Line
	}
	return out
}

// Received reports whether any connection sent a command line starting
// with prefix, e.g. "BUILD failed request=".
func (s *Server) Received(prefix string) bool {
	return slices.ContainsFunc(s.Commands(), func(l string) bool { return strings.HasPrefix(l, prefix) })
}

// CommandLog returns every command line received with its connection id.
func (s *Server) CommandLog() []Command {
	s.connMu.Lock()
	defer s.connMu.Unlock()
	return append([]Command(nil), s.commands...)
}

// ConnCommands returns the command lines of each registered connection, in
// accept order (index 0 is connection id 1).
func (s *Server) ConnCommands() [][]string {
	s.connMu.Lock()
	defer s.connMu.Unlock()
	out := make([][]string, len(s.all))
	for i, c := range s.all {
		out[i] = append([]string{}, c.commands...)
	}
	return out
}

// WaitCommand waits until a received command line starts with prefix (lines
// already received count) and returns the first such line.
func (s *Server) WaitCommand(ctx context.Context, prefix string) (string, error) {
	var found string
	err := s.waitFor(ctx, fmt.Sprintf("a command starting with %q", prefix), func() bool {
		for _, l := range s.Commands() {
			if strings.HasPrefix(l, prefix) {
				found = l
				return true
			}
		}
		return false
	})
	return found, err
}

// WaitCommands waits until n received command lines start with prefix and
// returns them.
func (s *Server) WaitCommands(ctx context.Context, prefix string, n int) ([]string, error) {
	var found []string
	err := s.waitFor(ctx, fmt.Sprintf("%d commands starting with %q", n, prefix), func() bool {
		found = found[:0]
		for _, l := range s.Commands() {
			if strings.HasPrefix(l, prefix) {
				found = append(found, l)
			}
		}
		return len(found) >= n
	})
	return found, err
}

// ClientCount is the number of live connections.
func (s *Server) ClientCount() int { return len(s.liveConns()) }

// Accepted is the number of connections registered so far (CONNECTED queued).
func (s *Server) Accepted() int {
	s.connMu.Lock()
	defer s.connMu.Unlock()
	return s.accepted
}

// Rejected is the number of connections closed for exceeding MaxClients.
func (s *Server) Rejected() int {
	s.connMu.Lock()
	defer s.connMu.Unlock()
	return s.rejected
}

// WaitClients waits until exactly n connections are live.
func (s *Server) WaitClients(ctx context.Context, n int) error {
	return s.waitFor(ctx, fmt.Sprintf("%d live clients", n), func() bool { return s.ClientCount() == n })
}

// SetFaults replaces the fault knobs for what happens next (new
// connections, commands read afterwards).
func (s *Server) SetFaults(f Faults) {
	s.mu.Lock()
	s.faults = f
	s.mu.Unlock()
}

// SetAcceptance replaces the acceptance hook of owned `BUILD ok`.
func (s *Server) SetAcceptance(f func(ctx context.Context, owner string) Outcome) {
	s.mu.Lock()
	s.acceptance = f
	s.mu.Unlock()
}

// SetUnwired changes the wiring, e.g. to finish a start-up window while a
// client stays connected.
func (s *Server) SetUnwired(u Unwired) {
	s.mu.Lock()
	s.unwired = u
	s.mu.Unlock()
}

// SessionID is the current receipt-ledger session.
func (s *Server) SessionID() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.session
}

// RegenerateSession starts a new ledger session (as after an agent restart):
// a fresh sessionId and an empty ledger. It returns the new id.
func (s *Server) RegenerateSession() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.session = agentproto.NewToken()
	s.ledger = ledger{}
	return s.session
}

// SetHealthLines replaces the HEALTH answer with these INFO lines; no lines
// restores the generated report.
func (s *Server) SetHealthLines(lines ...string) {
	s.mu.Lock()
	s.health = append([]string(nil), lines...)
	s.mu.Unlock()
}

// SetDiagnose replaces the diagnoser: f returns the INFO lines for a name
// (already stripped; "" when none was given). nil restores the default.
func (s *Server) SetDiagnose(f func(name string) []string) {
	s.mu.Lock()
	s.diagnose = f
	s.mu.Unlock()
}

// SetRestartLedger replaces the restart-ledger digest lines PENDING reports.
func (s *Server) SetRestartLedger(lines ...string) {
	s.mu.Lock()
	s.restart = append([]string(nil), lines...)
	s.mu.Unlock()
}
