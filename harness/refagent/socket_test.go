package refagent_test

import (
	"bufio"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/buildguard/buildguard/harness/refagent"
)

// TestStatusSocket drives one live JVM through the server side of the
// protocol: handshake, DOCTOR, silent ignores, line limits, broadcasts, the
// client limit, heartbeats, and port-file removal on shutdown.
func TestStatusSocket(t *testing.T) {
	t.Parallel()
	f := startApp(t)
	port := f.port(t)
	c := handshake(t, port)

	t.Run("doctor evidence in field order", func(t *testing.T) {
		body := c.request("DOCTOR d1", "DOCTOR_RESULT d1 ")
		checkDoctor(t, f, body)
	})

	t.Run("malformed commands are ignored silently", func(t *testing.T) {
		for _, cmd := range []string{
			"bogus", "DOCTOR", "DOCTOR  d9", "doctor d9", "DOCTOR a/b",
			"BUILD\tstarted request=x", "BUILD started request=x extra=1", "BUILD sideways request=x",
			"BUILD ok owner=o", "BUILD started request=a request=b", "RELOAD pause", "RELOAD PAUSE request=x",
			"reload pause request=x", "VERIFY v A 123", "VERIFY v 1A " + strings.Repeat("a", 64),
			"VERIFY v A " + strings.Repeat("A", 64),
		} {
			c.send(cmd)
		}
		c.send("DOC\rTOR d2") // \r is dropped wherever it appears
		ev, ok := c.awaitEvent(limit, func(ev event) bool { return ev.Level != "HEARTBEAT" })
		if !ok {
			t.Fatalf("no answer to DOCTOR d2 within %v", limit)
		}
		if !strings.HasPrefix(ev.Message, "DOCTOR_RESULT d2 {") {
			t.Fatalf("an ignored command produced %s", ev.raw)
		}
	})

	t.Run("messages are escaped", func(t *testing.T) {
		c.send("DIAGNOSE a\"b\\c\td")
		ev := c.await("Reference agent diagnosis for ")
		if want := `"message":"Reference agent diagnosis for a\"b\\c\td"`; !strings.Contains(ev.raw, want) {
			t.Errorf("raw line %s lacks %s", ev.raw, want)
		}
	})

	t.Run("pending", func(t *testing.T) {
		c.send("pending")
		first := c.await("Automatic reload: ")
		if want := "Automatic reload: paused=false pendingClasses=0 pendingActions=0 buildHold=none"; first.Message != want {
			t.Errorf("PENDING first line = %q, want %q", first.Message, want)
		}
		if second := c.next(); second.Message != "Nothing from this session needs a restart." {
			t.Errorf("PENDING second line = %q", second.Message)
		}
	})

	t.Run("unterminated last line is processed at EOF", func(t *testing.T) {
		c2 := handshake(t, port)
		c2.sendRaw("BUILD started")
		c2.conn.CloseWrite()
		c2.awaitEOF()
		c.await("Build started; holding 0 class files until BUILD ok")
		if got := c.reloadStatus("s1"); got != "paused=false pendingClasses=0 pendingActions=0 buildHold=legacy" {
			t.Fatalf("after an unowned BUILD started: %q", got)
		}
		// A named build cannot take a legacy hold; any unowned ok releases it.
		if got := c.request("BUILD started request=n1 owner=someone", "BUILD_"); got != "REJECTED n1 started owner=someone" {
			t.Errorf("named start on a legacy hold: BUILD_%s", got)
		}
		if got := c.request("BUILD OK request=l1", "BUILD_"); got != "ACK l1 ok" {
			t.Errorf("unowned ok on a legacy hold: BUILD_%s", got)
		}
		c.pollStatus("paused=false pendingClasses=0 pendingActions=0 buildHold=none")
	})

	t.Run("512 chars are accepted, 513 close the connection", func(t *testing.T) {
		c3 := handshake(t, port)
		c3.send(strings.Repeat(" ", 506) + "HEALTH")
		c3.await("Reference agent " + refagent.Release + " (test/demo agent, not Reclazz)")
		c3.send(strings.Repeat(" ", 507) + "HEALTH")
		rest := c3.awaitEOF()
		for _, l := range rest {
			if strings.Contains(l, "not Reclazz") {
				t.Errorf("the 513-char HEALTH was answered: %s", l)
			}
		}
	})

	t.Run("sixth client is closed without CONNECTED", func(t *testing.T) {
		var four []*client
		for range 4 {
			four = append(four, handshake(t, port))
		}
		sixth := dial(t, port)
		if lines := sixth.awaitEOF(); len(lines) != 0 {
			t.Fatalf("sixth client got %q before EOF", lines)
		}
		// Once one client has gone, a new one is welcome again.
		four[0].conn.CloseWrite()
		four[0].awaitEOF()
		again := handshake(t, port)
		for _, x := range append(four[1:], again) {
			x.conn.CloseWrite()
			x.awaitEOF()
		}
	})

	backPressureRE := regexp.MustCompile(`"level":"WARN","message":"Status client is not keeping up — dropped (1 event|[1-9][0-9]*000 events)\. Reload is unaffected\."`)
	t.Run("a client that does not read loses lines, others are warned", func(t *testing.T) {
		slow := handshake(t, port)
		slow.conn.SetReadBuffer(4096)
		fast := handshake(t, port)
		warned := make(chan string, 1)
		go func() {
			r := bufio.NewReader(fast.conn)
			for {
				line, err := r.ReadString('\n')
				if err != nil {
					return
				}
				if strings.Contains(line, "Status client is not keeping up") {
					select {
					case warned <- strings.TrimSpace(line):
					default:
					}
				}
			}
		}()
		cmd := "DIAGNOSE " + strings.Repeat("x", 400) + "\n"
		chunk := strings.Repeat(cmd, 200)
		check := func(line string) {
			// The warning comes at the 1st drop and every 1000th after it;
			// under load the reading client may itself drop the first one.
			if !backPressureRE.MatchString(line) {
				t.Errorf("back-pressure warning = %s", line)
			}
		}
		for range 100 {
			select {
			case line := <-warned:
				check(line)
				return
			default:
			}
			fast.sendRaw(chunk)
		}
		// The agent may still be answering what was sent (a loaded machine):
		// its warning may come after the last chunk went out.
		select {
		case line := <-warned:
			check(line)
		case <-time.After(30 * time.Second):
			t.Fatal("20000 broadcasts to a client that never reads produced no back-pressure warning within 30 s of the last")
		}
	})

	t.Run("heartbeat", func(t *testing.T) {
		re := regexp.MustCompile(`^\{"level":"HEARTBEAT","message":"","timestamp":"[^"]+"\}$`)
		ev, ok := c.awaitEvent(2*limit, func(ev event) bool { return ev.Level == "HEARTBEAT" })
		if !ok {
			t.Fatalf("no HEARTBEAT within %v", 2*limit)
		}
		if !re.MatchString(ev.raw) {
			t.Errorf("heartbeat line %s", ev.raw)
		}
	})

	t.Run("shutdown deletes the port file", func(t *testing.T) {
		f.terminate(t)
		if _, err := os.Stat(f.portFile); !os.IsNotExist(err) {
			t.Errorf("port file after shutdown: %v", err)
		}
		c.awaitEOF()
	})
}

func checkDoctor(t *testing.T, f *fixture, body string) {
	t.Helper()
	dec := json.NewDecoder(strings.NewReader(body))
	var keys []string
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		t.Fatalf("DOCTOR JSON %s", body)
	}
	for dec.More() {
		k, err := dec.Token()
		if err != nil {
			t.Fatalf("DOCTOR JSON %s: %v", body, err)
		}
		keys = append(keys, k.(string))
		var skip json.RawMessage
		if err := dec.Decode(&skip); err != nil {
			t.Fatal(err)
		}
	}
	want := []string{"requestId", "status", "detail", "sessionId", "agentVersion", "pid", "javaVersion", "vmName",
		"workingDirectory", "watcherState", "buildHold", "watchedDirectoryCount", "unwatchableDirectoryCount",
		"watchSampleTruncated", "watchedDirectories", "buildOwnershipSupported", "verifySupported", "scanSupported",
		"reloadConfirmed"}
	if strings.Join(keys, ",") != strings.Join(want, ",") {
		t.Errorf("DOCTOR fields\n got %v\nwant %v", keys, want)
	}
	var d struct {
		RequestID, Status, Detail, SessionID, AgentVersion, Pid, JavaVersion, VMName string
		WorkingDirectory, WatcherState, BuildHold                                    string
		WatchedDirectoryCount, UnwatchableDirectoryCount                             int
		WatchSampleTruncated                                                         bool
		WatchedDirectories                                                           []string
		BuildOwnershipSupported, VerifySupported, ScanSupported, ReloadConfirmed     bool
	}
	if err := json.Unmarshal([]byte(body), &d); err != nil {
		t.Fatalf("DOCTOR JSON types: %v", err)
	}
	realRoot, err := filepath.EvalSymlinks(f.root)
	if err != nil {
		t.Fatal(err)
	}
	realA, _ := filepath.EvalSymlinks(f.outA)
	realB, _ := filepath.EvalSymlinks(f.outB)
	checks := []struct {
		name      string
		got, want any
	}{
		{"requestId", d.RequestID, "d1"},
		{"status", d.Status, "observed"},
		{"agentVersion", d.AgentVersion, refagent.Release},
		{"pid", d.Pid, strconv.Itoa(f.proc.PID())},
		{"workingDirectory", d.WorkingDirectory, realRoot},
		{"watcherState", d.WatcherState, "watching"},
		{"buildHold", d.BuildHold, "none"},
		{"watchedDirectoryCount", d.WatchedDirectoryCount, 2},
		{"unwatchableDirectoryCount", d.UnwatchableDirectoryCount, 0},
		{"watchSampleTruncated", d.WatchSampleTruncated, false},
		{"watchedDirectories", strings.Join(d.WatchedDirectories, "|"), realA + "|" + realB},
		{"buildOwnershipSupported", d.BuildOwnershipSupported, true},
		{"verifySupported", d.VerifySupported, true},
		{"scanSupported", d.ScanSupported, true},
		{"reloadConfirmed", d.ReloadConfirmed, false},
		{"sessionId length", len(d.SessionID), 36},
	}
	for _, c := range checks {
		if c.got != c.want {
			t.Errorf("DOCTOR %s = %v, want %v", c.name, c.got, c.want)
		}
	}
	if d.Detail == "" || d.JavaVersion == "" || d.VMName == "" {
		t.Errorf("DOCTOR detail/javaVersion/vmName empty: %+v", d)
	}
}
