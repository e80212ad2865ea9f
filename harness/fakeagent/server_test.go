package fakeagent

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/buildguard/buildguard/agentproto"
	"github.com/buildguard/buildguard/internal/testsupport/wait"
)

func TestPortFileWrittenAndRemoved(t *testing.T) {
	t.Parallel()
	s := quiet(t)
	b, err := os.ReadFile(s.PortFile())
	if err != nil {
		t.Fatal(err)
	}
	if string(b) != strconv.Itoa(s.Port()) {
		t.Fatalf("port file = %q, want %q (no newline)", b, strconv.Itoa(s.Port()))
	}
	if want := filepath.Join(s.Dir(), ".reclazz", "agent.port"); s.PortFile() != want {
		t.Fatalf("PortFile = %q, want %q", s.PortFile(), want)
	}
	fi, _ := os.Stat(s.PortFile())
	if fi.Mode().Perm() != 0o644 {
		t.Fatalf("mode %v, want rw-r--r--", fi.Mode().Perm())
	}
	entries, _ := os.ReadDir(filepath.Dir(s.PortFile()))
	if len(entries) != 1 {
		t.Fatalf("temp files left behind: %v", entries)
	}
	s.Close()
	if _, err := os.Stat(s.PortFile()); !os.IsNotExist(err) {
		t.Fatalf("port file still present after Close: %v", err)
	}
	s.Close() // idempotent
}

func TestStopLeavesStalePortFile(t *testing.T) {
	t.Parallel()
	s := quiet(t)
	s.Stop(true)
	b, err := os.ReadFile(s.PortFile())
	if err != nil || string(b) != strconv.Itoa(s.Port()) {
		t.Fatalf("stale port file = %q, %v", b, err)
	}
	if c, err := dialOnce(s.Addr()); err == nil {
		c.Close()
		t.Fatal("stopped agent still accepts connections")
	}
}

func TestPortFileSymlinkRefused(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	target := filepath.Join(dir, "target")
	os.WriteFile(target, []byte("keep"), 0o644)
	link := filepath.Join(dir, "agent.port")
	if err := os.Symlink(target, link); err != nil {
		t.Skip("symlinks unsupported:", err)
	}
	s := quiet(t, WithPortFile(link))
	if s.PortFileWritten() {
		t.Fatal("wrote through a symlink")
	}
	if b, _ := os.ReadFile(target); string(b) != "keep" {
		t.Fatalf("symlink target changed to %q", b)
	}
	dial(t, s) // still serving
}

func TestConnectedLine(t *testing.T) {
	t.Parallel()
	s := quiet(t, WithAgent(`1.2.3-"x"`))
	c := dialRaw(t, s)
	l, err := c.line()
	if err != nil {
		t.Fatal(err)
	}
	re := regexp.MustCompile(`^\{"level":"CONNECTED","message":"Agent status server connected","timestamp":"[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}(\.[0-9]{3}|\.[0-9]{6}|\.[0-9]{9})?Z","version":1,"agent":"1\.2\.3-\\"x\\""\}$`)
	if !re.MatchString(l) {
		t.Fatalf("CONNECTED line %q", l)
	}
}

func TestCRLFEndings(t *testing.T) {
	t.Parallel()
	s := quiet(t, WithCRLF())
	c := dialRaw(t, s)
	l, _ := c.line()
	if !strings.HasSuffix(l, "}\r") {
		t.Fatalf("line %q does not end with CRLF", l)
	}
}

func TestIPv6Listener(t *testing.T) {
	t.Parallel()
	if ln, err := listenProbe("[::1]:0"); err != nil {
		t.Skip("no IPv6 loopback:", err)
	} else {
		ln.Close()
	}
	s := quiet(t, WithIPv6())
	if !strings.HasPrefix(s.Addr(), "[::1]:") {
		t.Fatalf("Addr = %q", s.Addr())
	}
	dial(t, s)
}

func TestFixedPort(t *testing.T) {
	t.Parallel()
	first := quiet(t)
	port := first.Port()
	first.Close()
	s, err := Start(Config{Port: port, Heartbeat: -1})
	if err != nil {
		t.Skip("port reused meanwhile:", err)
	}
	defer s.Close()
	if s.Port() != port {
		t.Fatalf("Port = %d, want %d", s.Port(), port)
	}
}

func TestEscapeTruncateTimestamp(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		`a"b\c`:            `a\"b\\c`,
		"l\nc\rt\t":        `l\nc\rt\t`,
		"\x00\x01\x1f":     `\u0000\u0001\u001f`,
		"\x7f\u2028é/😀":    "\x7f\u2028é/😀",
		"\x1b[31m":         `\u001b[31m`,
		"plain text 123 ~": "plain text 123 ~",
	} {
		if got := Escape(in); got != want {
			t.Errorf("Escape(%q) = %q, want %q", in, got, want)
		}
	}
	exact := strings.Repeat("a", 4096)
	if Truncate(exact) != exact {
		t.Error("4096 chars truncated")
	}
	if got := Truncate(exact + "b"); got != exact+"...(truncated)" {
		t.Errorf("4097 chars: suffix %q", got[4090:])
	}
	// A surrogate pair straddling the cut leaves a lone surrogate, written as '?'.
	cut := strings.Repeat("a", 4095) + "😀" + "tail"
	if got := Truncate(cut); got != strings.Repeat("a", 4095)+"?...(truncated)" {
		t.Errorf("surrogate cut: suffix %q", got[4090:])
	}
	// 2048 astral chars are exactly 4096 UTF-16 units: kept whole.
	astral := strings.Repeat("😀", 2048)
	if Truncate(astral) != astral {
		t.Error("4096 units of astral chars truncated")
	}
	base := time.Date(2026, 9, 8, 9, 12, 44, 0, time.UTC)
	for ns, want := range map[int]string{
		0:           "2026-09-08T09:12:44Z",
		120_000_000: "2026-09-08T09:12:44.120Z",
		120_500_000: "2026-09-08T09:12:44.120500Z",
		120_500_001: "2026-09-08T09:12:44.120500001Z",
	} {
		if got := Timestamp(base.Add(time.Duration(ns))); got != want {
			t.Errorf("Timestamp(+%dns) = %q, want %q", ns, got, want)
		}
	}
}

func TestEmitOnTheWire(t *testing.T) {
	t.Parallel()
	s := quiet(t)
	c := dial(t, s)
	s.Emit(agentproto.LevelStructuralReload, "Structural reload: a.B (shape, 3ms)")
	s.Emit(agentproto.LevelWarn, "tab\there \"quoted\" \x01")
	s.Emit(agentproto.LevelInfo, strings.Repeat("x", 5000))
	ev := c.next()
	if ev.Type != "structural" || !strings.HasSuffix(ev.Raw, `,"type":"structural"}`) {
		t.Fatalf("structural line %q", ev.Raw)
	}
	ev = c.next()
	if !strings.Contains(ev.Raw, `"message":"tab\there \"quoted\" \u0001"`) || ev.Message != "tab\there \"quoted\" \x01" {
		t.Fatalf("escaped line %q", ev.Raw)
	}
	if strings.Contains(ev.Raw, `"type"`) {
		t.Fatal("type on a non-structural line")
	}
	ev = c.next()
	if ev.Message != strings.Repeat("x", 4096)+"...(truncated)" {
		t.Fatalf("truncated message length %d", len(ev.Message))
	}
}

func TestSixthClientClosedWithoutConnected(t *testing.T) {
	t.Parallel()
	s := quiet(t)
	var cs []*rawClient
	for i := 0; i < 5; i++ {
		cs = append(cs, dial(t, s))
	}
	sixth := dialRaw(t, s)
	sixth.expectClosed()
	if s.Rejected() != 1 || s.ClientCount() != 5 {
		t.Fatalf("rejected %d, clients %d", s.Rejected(), s.ClientCount())
	}
	// A closed client frees its slot (pruned at the next accept).
	cs[0].nc.Close()
	if err := s.WaitClients(wait.Context(t, limit), 4); err != nil {
		t.Fatal(err)
	}
	dial(t, s)
}

func TestHeartbeat(t *testing.T) {
	t.Parallel()
	s := NewServer(t, WithHeartbeat(20*time.Millisecond))
	c := dial(t, s)
	ev := c.next()
	if ev.Level != agentproto.LevelHeartbeat || ev.Message != "" {
		t.Fatalf("got %q, want HEARTBEAT", ev.Raw)
	}
	if !regexp.MustCompile(`^\{"level":"HEARTBEAT","message":"","timestamp":"[^"]+"\}$`).MatchString(ev.Raw) {
		t.Fatalf("heartbeat line %q", ev.Raw)
	}
}

func TestCommandLineLimits(t *testing.T) {
	t.Parallel()
	s := quiet(t)
	c := dial(t, s)
	// 512 chars are accepted (a padded DOCTOR whose token is invalid: ignored).
	c.send("DOCTOR " + strings.Repeat("x", 505))
	if got := c.probe(); len(got) != 0 {
		t.Fatalf("512-char line answered: %q", got)
	}
	// '\r' anywhere is dropped: "DOC\rTOR r1" is DOCTOR r1.
	c.send("DOC\rTOR r\r1\r")
	if got := c.probe(); len(got) != 1 || !strings.HasPrefix(got[0], "DOCTOR_RESULT r1 {") {
		t.Fatalf("CR not dropped: %q", got)
	}
	// 511 + one astral char (2 units) = 513 units: closed silently.
	c.send(strings.Repeat("y", 511) + "😀")
	c.expectClosed()
	cmds := s.Commands()
	if len(cmds) != 4 || cmds[2] != "DOCTOR r1" {
		t.Fatalf("commands %q", cmds)
	}

	c2 := dial(t, s)
	c2.send(strings.Repeat("z", 510) + "😀") // exactly 512 units
	if got := c2.probe(); len(got) != 0 {
		t.Fatalf("answered %q", got)
	}
	c2.send(strings.Repeat("z", 513))
	c2.expectClosed()
}

func TestEOFPartialLineIsProcessed(t *testing.T) {
	t.Parallel()
	s := quiet(t)
	c := dial(t, s)
	if _, err := c.nc.Write([]byte("BUILD started request=r1 owner=o1")); err != nil {
		t.Fatal(err)
	}
	c.nc.(interface{ CloseWrite() error }).CloseWrite()
	if _, err := s.WaitCommand(wait.Context(t, limit), "BUILD started"); err != nil {
		t.Fatal(err)
	}
	if err := s.WaitHold(wait.Context(t, limit), HoldNamed); err != nil {
		t.Fatal(err)
	}
	if err := s.WaitClients(wait.Context(t, limit), 0); err != nil {
		t.Fatal("connection not closed after client EOF:", err)
	}
}

func TestCommandsPerConnection(t *testing.T) {
	t.Parallel()
	s := quiet(t)
	a := dial(t, s)
	b := dial(t, s)
	a.send("SCAN")
	a.probe()
	b.send("  health ")
	b.probe()
	got := s.ConnCommands()
	if len(got) != 2 || len(got[0]) != 2 || got[0][0] != "SCAN" || got[1][0] != "  health " {
		t.Fatalf("ConnCommands = %q", got)
	}
	log := s.CommandLog()
	if log[0].Conn != 1 || log[len(log)-1].Conn != 2 {
		t.Fatalf("CommandLog = %v", log)
	}
}

func TestWaitCommandBounded(t *testing.T) {
	t.Parallel()
	s := quiet(t)
	ctx, cancel := contextWithTimeout(50 * time.Millisecond)
	defer cancel()
	if _, err := s.WaitCommand(ctx, "BUILD"); err == nil {
		t.Fatal("WaitCommand returned without a command")
	}
}

// decodeJSON parses the payload after a "<KIND> <tok> " prefix.
func decodeJSON(t *testing.T, msg, prefix string) map[string]any {
	t.Helper()
	if !strings.HasPrefix(msg, prefix) {
		t.Fatalf("message %q lacks prefix %q", msg, prefix)
	}
	var m map[string]any
	if err := json.Unmarshal([]byte(msg[len(prefix):]), &m); err != nil {
		t.Fatalf("payload of %q: %v", msg, err)
	}
	return m
}

func TestPortFileRemovedAndRewritten(t *testing.T) {
	t.Parallel()
	s := quiet(t)
	c := dial(t, s)
	if err := s.RemovePortFile(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(s.PortFile()); !os.IsNotExist(err) {
		t.Fatal("port file still present")
	}
	c.probe() // still serving
	os.WriteFile(s.PortFile(), []byte(" 1 \n"), 0o644)
	if err := s.WritePortFile(); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(s.PortFile()); string(b) != strconv.Itoa(s.Port()) {
		t.Fatalf("rewritten port file %q", b)
	}
}

func TestWithoutPortFile(t *testing.T) {
	t.Parallel()
	s := quiet(t, WithoutPortFile())
	if s.PortFile() != "" || s.PortFileWritten() {
		t.Fatalf("port file %q written", s.PortFile())
	}
	if _, err := os.Stat(filepath.Join(s.Dir(), ".reclazz")); !os.IsNotExist(err) {
		t.Fatal(".reclazz created")
	}
	dial(t, s)
}
