package refagent_test

import (
	"bufio"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/buildguard/buildguard/harness/jvm"
	"github.com/buildguard/buildguard/harness/refagent"
	"github.com/buildguard/buildguard/internal/testsupport/wait"
)

// limit bounds every single wait in these tests; none of them is a timing assertion.
const limit = 15 * time.Second

var (
	jarDir   string
	jarOnce  sync.Once
	jarPath  string
	jarError error
)

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "refagent-test-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	jarDir = dir
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// agentJar builds the agent once per test binary; a missing JDK fails the test.
func agentJar(t testing.TB) string {
	t.Helper()
	jarOnce.Do(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		defer cancel()
		jarPath, jarError = refagent.Build(ctx, jarDir)
	})
	if jarError != nil {
		t.Fatalf("building the agent jar: %v", jarError)
	}
	return jarPath
}

// requireTool fails (never skips) when a JDK tool is missing.
func requireTool(t testing.TB, name string) string {
	t.Helper()
	p, err := jvm.Tool(name)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// compileJava compiles the given sources (file name → text) with javac and
// returns the class files (file name → bytes).
func compileJava(t testing.TB, sources map[string]string) map[string][]byte {
	t.Helper()
	dir := t.TempDir()
	var files []string
	for name, text := range sources {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		files = append(files, p)
	}
	out := filepath.Join(dir, "classes")
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, requireTool(t, "javac"), append([]string{"--release", "17", "-d", out}, files...)...)
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("javac: %v\n%s", err, b)
	}
	classes := map[string][]byte{}
	entries, err := os.ReadDir(out)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		b, err := os.ReadFile(filepath.Join(out, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		classes[e.Name()] = b
	}
	return classes
}

func sha(b []byte) string {
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:])
}

// lineLog is the application's output (jvm.LineLog) with waits that fail
// the test.
type lineLog struct{ *jvm.LineLog }

func (l lineLog) mark() int               { return l.Mark() }
func (l lineLog) since(from int) []string { return l.Since(from) }

// waitFor returns the index of the first line at or after from that matches.
func (l lineLog) waitFor(t testing.TB, from int, what string, match func(string) bool) int {
	t.Helper()
	i, err := l.WaitFor(from, limit, match)
	if err != nil {
		t.Fatalf("no application line %s: %v; last lines:\n%s", what, err, l.Tail(15))
	}
	return i
}

// fixture is a live JVM running App with the agent watching outA and outB.
type fixture struct {
	root, outA, outB, appDir, portFile string
	log                                lineLog
	proc                               *jvm.Process
}

// startApp compiles A=1, B=1 and App, launches the JVM the way the acceptance
// harness does (paths with spaces), and waits for VALUES=1:1 and the watcher.
func startApp(t *testing.T) *fixture {
	t.Helper()
	return startAppWith(t, appConfig{startupDelaySec: 1, awaitWatching: true})
}

// appConfig varies startApp.
type appConfig struct {
	// prepare runs just before the JVM starts.
	prepare func(*fixture)
	// startupDelaySec is the agent's watcher delay.
	startupDelaySec int
	// awaitWatching makes start-up wait for the agent's "] Watching " line.
	awaitWatching bool
	// workDir, when set, is the JVM's working directory instead of the root.
	workDir string
}

func startAppWith(t *testing.T, cfg appConfig) *fixture {
	t.Helper()
	jar := agentJar(t)
	java := requireTool(t, "java")
	root := filepath.Join(t.TempDir(), "project with spaces")
	f := &fixture{
		root:     root,
		outA:     filepath.Join(root, "a", "out dir"),
		outB:     filepath.Join(root, "b", "out dir"),
		appDir:   filepath.Join(root, "app"),
		portFile: filepath.Join(root, "agent.port"),
	}
	for _, d := range []string{f.outA, f.outB, f.appDir} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	classes := compileJava(t, map[string]string{"A.java": jvm.Class("A", 1), "B.java": jvm.Class("B", 1), "App.java": jvm.App})
	f.install(t, f.outA, "A.class", classes["A.class"])
	f.install(t, f.outB, "B.class", classes["B.class"])
	f.install(t, f.appDir, "App.class", classes["App.class"])

	if cfg.prepare != nil {
		cfg.prepare(f)
	}
	flag, err := refagent.AgentFlag(jar, refagent.Options{
		WatchDirs:       []string{f.outA, f.outB},
		PortFile:        f.portFile,
		StartupDelaySec: cfg.startupDelaySec,
		DebounceMs:      100,
	})
	if err != nil {
		t.Fatal(err)
	}
	cp := strings.Join([]string{f.outA, f.outB, f.appDir}, string(os.PathListSeparator))
	dir := root
	if cfg.workDir != "" {
		dir = cfg.workDir
	}
	f.proc, err = jvm.Start(jvm.Config{Java: java, Args: []string{flag, "-cp", cp, "App"}, Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	f.log = lineLog{f.proc.Lines()}
	t.Cleanup(func() {
		if err := f.proc.Kill(); err != nil {
			t.Error(err)
		}
	})
	f.log.waitFor(t, 0, "VALUES=1:1", func(s string) bool { return s == "VALUES=1:1" })
	if cfg.awaitWatching {
		f.log.waitFor(t, 0, "with '] Watching '", func(s string) bool { return strings.Contains(s, "] Watching ") })
	}
	return f
}

// install writes class bytes into an output directory, as a compiler would.
func (f *fixture) install(t *testing.T, dir, name string, b []byte) {
	t.Helper()
	if len(b) == 0 {
		t.Fatalf("no bytes for %s", name)
	}
	if err := os.WriteFile(filepath.Join(dir, name), b, 0o644); err != nil {
		t.Fatal(err)
	}
}

// port reads the port file, which must hold only the decimal port.
func (f *fixture) port(t *testing.T) string {
	t.Helper()
	b, err := os.ReadFile(f.portFile)
	if err != nil {
		t.Fatalf("reading port file: %v", err)
	}
	if !regexp.MustCompile(`^[1-9][0-9]{0,4}$`).Match(b) {
		t.Fatalf("port file content = %q, want digits without newline", b)
	}
	if fi, err := os.Stat(f.portFile); err != nil || fi.Mode().Perm() != 0o644 {
		t.Fatalf("port file mode = %v, %v; want rw-r--r--", fi.Mode(), err)
	}
	return string(b)
}

// terminate sends SIGTERM (running the agent's shutdown hook) and waits for exit.
func (f *fixture) terminate(t *testing.T) {
	t.Helper()
	if err := f.proc.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	select {
	case <-f.proc.Exited():
	case <-time.After(limit):
		t.Fatalf("java did not exit within %v of SIGTERM", limit)
	}
}

// event is one agent status line.
type event struct {
	Level     string `json:"level"`
	Message   string `json:"message"`
	Timestamp string `json:"timestamp"`
	raw       string
}

// client is a minimal line client of the status socket.
type client struct {
	t    *testing.T
	conn *net.TCPConn
	r    *bufio.Reader
}

func dial(t *testing.T, port string) *client {
	t.Helper()
	conn, err := net.DialTimeout("tcp", "127.0.0.1:"+port, 5*time.Second)
	if err != nil {
		t.Fatalf("dialing agent: %v", err)
	}
	t.Cleanup(func() { conn.Close() })
	return &client{t: t, conn: conn.(*net.TCPConn), r: bufio.NewReader(conn)}
}

var connectedRE = regexp.MustCompile(`^\{"level":"CONNECTED","message":"Agent status server connected","timestamp":"([^"]+)","version":1,"agent":"` +
	regexp.QuoteMeta(refagent.Release) + `"\}$`)

// handshake dials and requires the exact CONNECTED line first.
func handshake(t *testing.T, port string) *client {
	t.Helper()
	c := dial(t, port)
	line, err := c.readLine()
	if err != nil {
		t.Fatalf("reading CONNECTED: %v", err)
	}
	m := connectedRE.FindStringSubmatch(line)
	if m == nil {
		t.Fatalf("first line = %s, want the CONNECTED handshake", line)
	}
	if _, err := time.Parse(time.RFC3339Nano, m[1]); err != nil {
		t.Fatalf("CONNECTED timestamp %q: %v", m[1], err)
	}
	return c
}

// readLine reads one line (terminator stripped); io.EOF when the agent closed.
func (c *client) readLine() (string, error) {
	c.conn.SetReadDeadline(time.Now().Add(limit))
	line, err := c.r.ReadString('\n')
	if err != nil {
		if line != "" && errors.Is(err, io.EOF) {
			return "", fmt.Errorf("partial line %q before EOF", line)
		}
		return "", err
	}
	return strings.TrimRight(line, "\r\n"), nil
}

func (c *client) next() event {
	c.t.Helper()
	line, err := c.readLine()
	if err != nil {
		c.t.Fatalf("reading agent line: %v", err)
	}
	var ev event
	if err := json.Unmarshal([]byte(line), &ev); err != nil {
		c.t.Fatalf("agent line is not JSON: %s: %v", line, err)
	}
	if _, err := time.Parse(time.RFC3339Nano, ev.Timestamp); err != nil {
		c.t.Fatalf("bad timestamp in %s", line)
	}
	ev.raw = line
	return ev
}

func (c *client) send(cmd string) {
	c.t.Helper()
	c.sendRaw(cmd + "\n")
}

func (c *client) sendRaw(s string) {
	c.t.Helper()
	c.conn.SetWriteDeadline(time.Now().Add(limit))
	if _, err := io.WriteString(c.conn, s); err != nil {
		c.t.Fatalf("writing %q: %v", s, err)
	}
}

// await skips lines until an INFO line whose message has the prefix.
func (c *client) await(prefix string) event {
	c.t.Helper()
	ev, ok := c.awaitEvent(limit, func(ev event) bool { return ev.Level == "INFO" && strings.HasPrefix(ev.Message, prefix) })
	if !ok {
		c.t.Fatalf("no INFO line starting with %q within %v", prefix, limit)
	}
	return ev
}

// awaitEvent reads events until match accepts one, for at most within in all
// (heartbeats alone never extend it); ok is false when none matched in time.
func (c *client) awaitEvent(within time.Duration, match func(event) bool) (ev event, ok bool) {
	c.t.Helper()
	deadline := time.Now().Add(within)
	for time.Now().Before(deadline) {
		if ev = c.next(); match(ev) {
			return ev, true
		}
	}
	return event{}, false
}

// request sends a correlated command and returns the reply message after prefix.
func (c *client) request(cmd, prefix string) string {
	c.t.Helper()
	c.send(cmd)
	return strings.TrimPrefix(c.await(prefix).Message, prefix)
}

// awaitEOF reads until the agent closes the connection and returns the lines read.
func (c *client) awaitEOF() []string {
	c.t.Helper()
	var lines []string
	for {
		line, err := c.readLine()
		if errors.Is(err, io.EOF) {
			return lines
		}
		if err != nil {
			c.t.Fatalf("waiting for the agent to close: %v (read %q)", err, lines)
		}
		lines = append(lines, line)
	}
}

// reloadStatus returns the RELOAD_STATE snapshot of a status request.
func (c *client) reloadStatus(tok string) string {
	c.t.Helper()
	return c.request("RELOAD status request="+tok, "RELOAD_STATE "+tok+" status ")
}

// pollStatus polls RELOAD status until it equals want (the agent works asynchronously).
func (c *client) pollStatus(want string) {
	c.t.Helper()
	i, got := 0, ""
	if !wait.Until(limit, func() bool {
		i++
		got = c.reloadStatus(fmt.Sprintf("poll%d", i))
		return got == want
	}) {
		c.t.Fatalf("RELOAD status = %q, still not %q after %v", got, want, limit)
	}
}

// receipt is the VERIFY_RESULT JSON.
type receipt struct {
	RequestID      string `json:"requestId"`
	SessionID      string `json:"sessionId"`
	ClassName      string `json:"className"`
	ExpectedSha256 string `json:"expectedSha256"`
	ObservedSha256 string `json:"observedSha256"`
	Status         string `json:"status"`
	Source         string `json:"source"`
	Detail         string `json:"detail"`
	CompletedAt    string `json:"completedAt"`
}

func (c *client) verify(tok, class, hash string) receipt {
	c.t.Helper()
	body := c.request("VERIFY "+tok+" "+class+" "+hash, "VERIFY_RESULT "+tok+" ")
	var r receipt
	if err := json.Unmarshal([]byte(body), &r); err != nil {
		c.t.Fatalf("VERIFY_RESULT JSON %s: %v", body, err)
	}
	if r.RequestID != tok || r.ClassName != class || r.ExpectedSha256 != hash {
		c.t.Fatalf("VERIFY_RESULT does not echo the query: %+v", r)
	}
	return r
}

// pollVerify polls VERIFY until the status is no longer running.
func (c *client) pollVerify(class, hash string) receipt {
	c.t.Helper()
	i, r := 0, receipt{}
	if !wait.Until(limit, func() bool {
		i++
		r = c.verify(fmt.Sprintf("v%d", i), class, hash)
		return r.Status != "running" && r.Status != "not_observed"
	}) {
		c.t.Fatalf("VERIFY %s still %s after %v", class, r.Status, limit)
	}
	return r
}
