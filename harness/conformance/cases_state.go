package conformance

import (
	"context"
	"encoding/json"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/buildguard/buildguard/agentproto"
)

const (
	detailNotObserved = "No retained reload receipt in this agent session"
	detailMismatch    = "The latest attempted bytes differ from the requested bytes"
)

// testReceipts: not_observed, applied and mismatch receipts (docs/agent-protocol.md#8), one
// session id across them and DOCTOR.
func testReceipts(t *testing.T, s *suite) {
	c := s.dial(t)
	never := c.verify(t, "conformance.NeverReloaded", zeroSHA)
	if never.Status != "not_observed" || never.ObservedSHA256 != "" || never.Source != "" || never.CompletedAt != "" || never.Detail != detailNotObserved {
		t.Errorf("receipt of a class never reloaded = %+v, want not_observed, detail %q, empty observedSha256/source/completedAt", never, detailNotObserved)
	}

	cls := s.agent.Output().Write(t, ClassB, s.next())
	applied := s.pollApplied(t, c, cls)
	if want, _ := agentproto.CutUTF16(cls.Path, 200); applied.Source != want {
		t.Errorf("applied receipt source = %q, want the class file path %q", applied.Source, want)
	}
	if strings.TrimSpace(applied.Detail) == "" {
		t.Errorf("applied receipt has a blank detail")
	}
	if onDisk := fileSHA256(t, cls.Path); applied.ObservedSHA256 != onDisk {
		t.Errorf("applied observedSha256 = %s, the class file on disk hashes to %s", applied.ObservedSHA256, onDisk)
	}

	// The strict client accepts the applied receipt.
	ctx, cancel := context.WithTimeout(context.Background(), s.wait)
	defer cancel()
	conn, err := agentproto.Dial(ctx, s.agent.Port())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if r, err := conn.Verify(ctx, cls.Name, cls.SHA256); err != nil || r.Status != agentproto.ReceiptApplied {
		t.Errorf("agentproto Verify of the applied bytes: %+v, %v", r, err)
	}

	mismatch := c.verify(t, cls.Name, zeroSHA)
	if mismatch.Status != "mismatch" || mismatch.Detail != detailMismatch || mismatch.ObservedSHA256 != cls.SHA256 ||
		mismatch.Source != applied.Source || mismatch.CompletedAt != applied.CompletedAt {
		t.Errorf("receipt for other bytes = %+v, want mismatch, detail %q, observed/source/completedAt of the latest attempt %+v", mismatch, detailMismatch, applied)
	}

	d, err := conn.Doctor(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range []receipt{never, applied, mismatch} {
		if r.SessionID != d.SessionID {
			t.Errorf("receipt sessionId %q differs from DOCTOR sessionId %q", r.SessionID, d.SessionID)
		}
	}
}

// doctorKeys are the DOCTOR fields of docs/agent-protocol.md#7 in their order.
var doctorKeys = []string{
	"requestId", "status", "detail", "sessionId", "agentVersion", "pid", "javaVersion", "vmName", "workingDirectory",
	"watcherState", "buildHold", "watchedDirectoryCount", "unwatchableDirectoryCount", "watchSampleTruncated",
	"watchedDirectories", "buildOwnershipSupported", "verifySupported", "scanSupported", "reloadConfirmed",
}

var (
	uuidRE  = regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$`)
	pidRE   = regexp.MustCompile(`^[1-9][0-9]*$`)
	countRE = regexp.MustCompile(`^[0-9]{1,9}$`)
)

// testDoctor: the DOCTOR field rules of docs/agent-protocol.md#7 on a fully started agent, the
// strict client's acceptance, and that DOCTOR changes nothing.
func testDoctor(t *testing.T, s *suite) {
	c := s.dial(t)
	kate := s.owner("kate")
	c.mustBuild(t, "started", kate, true)
	tok := agentproto.NewToken()
	body, _ := c.request(t, "DOCTOR "+tok, "DOCTOR_RESULT "+tok+" ")
	if n := agentproto.UTF16Len(body); n > 3900 {
		t.Errorf("DOCTOR JSON is %d chars, bound 3900", n)
	}
	obj, err := agentproto.ParseObject([]byte(body))
	if err != nil {
		t.Fatalf("DOCTOR payload is not a JSON object: %s: %v", body, err)
	}
	var keys []string
	for _, m := range obj {
		keys = append(keys, m.Key)
	}
	if strings.Join(keys, ",") != strings.Join(doctorKeys, ",") {
		t.Fatalf("DOCTOR fields are %v, want exactly %v in that order", keys, doctorKeys)
	}
	str := func(key string) string {
		v, ok := obj.String(key)
		if !ok {
			t.Fatalf("DOCTOR %s is not a JSON string: %s", key, body)
		}
		if agentproto.UTF16Len(v) > 512 {
			t.Errorf("DOCTOR %s is longer than 512 chars", key)
		}
		return v
	}
	boolean := func(key string) bool {
		v, ok := obj.Bool(key)
		if !ok {
			t.Fatalf("DOCTOR %s is not a JSON boolean: %s", key, body)
		}
		return v
	}
	count := func(key string) int {
		raw, _ := obj.Get(key)
		if !countRE.Match(raw) {
			t.Fatalf("DOCTOR %s = %s, want a JSON number of 1-9 digits", key, raw)
		}
		n, _ := strconv.Atoi(string(raw))
		return n
	}
	if v := str("requestId"); v != tok {
		t.Errorf("DOCTOR requestId = %q, want %q", v, tok)
	}
	if v := str("status"); v != "observed" {
		t.Fatalf("DOCTOR status = %q on a running agent, want observed: %s", v, body)
	}
	if strings.TrimSpace(str("detail")) == "" {
		t.Errorf("DOCTOR detail is blank")
	}
	session := str("sessionId")
	if v := str("agentVersion"); v != c.agent {
		t.Errorf("DOCTOR agentVersion = %q, CONNECTED agent = %q", v, c.agent)
	}
	pid := str("pid")
	if !pidRE.MatchString(pid) {
		t.Errorf("DOCTOR pid = %q, want a decimal pid string", pid)
	}
	if strings.TrimSpace(str("javaVersion")) == "" || strings.TrimSpace(str("vmName")) == "" {
		t.Errorf("DOCTOR javaVersion or vmName is blank: %s", body)
	}
	wd := str("workingDirectory")
	if !filepath.IsAbs(wd) {
		t.Errorf("DOCTOR workingDirectory %q is not absolute", wd)
	}
	if v := str("watcherState"); v != "watching" {
		t.Errorf("DOCTOR watcherState = %q on a started agent, want watching", v)
	}
	if v := str("buildHold"); v != "named" {
		t.Errorf("DOCTOR buildHold = %q under a named hold, want named", v)
	}
	watched, unwatchable := count("watchedDirectoryCount"), count("unwatchableDirectoryCount")
	_ = unwatchable
	truncated := boolean("watchSampleTruncated")
	var sample []json.RawMessage
	raw, _ := obj.Get("watchedDirectories")
	if err := json.Unmarshal(raw, &sample); err != nil {
		t.Fatalf("DOCTOR watchedDirectories = %s, want an array", raw)
	}
	if len(sample) > 8 {
		t.Errorf("DOCTOR watchedDirectories has %d entries, bound 8", len(sample))
	}
	var dirs []string
	for _, e := range sample {
		var p string
		if err := json.Unmarshal(e, &p); err != nil || strings.TrimSpace(p) == "" || agentproto.UTF16Len(p) > 256 || !filepath.IsAbs(p) {
			t.Errorf("DOCTOR watchedDirectories entry %s is not an absolute path of at most 256 chars", e)
		}
		dirs = append(dirs, p)
	}
	if watched < len(sample) || (watched > len(sample)) != truncated {
		t.Errorf("DOCTOR watchedDirectoryCount=%d, sample of %d, watchSampleTruncated=%t: want count ≥ sample and truncated iff count > sample", watched, len(sample), truncated)
	}
	for _, k := range []string{"buildOwnershipSupported", "verifySupported", "scanSupported"} {
		if !boolean(k) {
			t.Errorf("DOCTOR %s = false on a fully started agent", k)
		}
	}
	if boolean("reloadConfirmed") {
		t.Errorf("DOCTOR reloadConfirmed = true, want always false")
	}
	if !uuidRE.MatchString(session) {
		t.Errorf("DOCTOR sessionId = %q with verifySupported, want a random UUID", session)
	}
	if app := s.agent.App(); app != nil {
		if pid != strconv.Itoa(app.PID()) {
			t.Errorf("DOCTOR pid = %s, the JVM's pid is %d", pid, app.PID())
		}
		// Paths compare after resolving symlinks (a temp dir may sit below one).
		if !samePath(wd, app.Dir()) {
			t.Errorf("DOCTOR workingDirectory = %q, the JVM runs in %q", wd, app.Dir())
		}
		for _, dir := range app.OutputDirs() {
			if !truncated && !slices.ContainsFunc(dirs, func(d string) bool { return samePath(d, dir) }) {
				t.Errorf("DOCTOR watchedDirectories %q lacks the class output directory %q", dirs, dir)
			}
		}
	}

	// The strict client validator accepts it, and DOCTOR changed nothing.
	ctx, cancel := context.WithTimeout(context.Background(), s.wait)
	defer cancel()
	conn, err := agentproto.Dial(ctx, s.agent.Port())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	d, err := conn.Doctor(ctx)
	if err != nil || d.Status != agentproto.DoctorObserved {
		t.Fatalf("agentproto Doctor: %+v, %v", d, err)
	}
	if d.SessionID != session || d.PID != pid {
		t.Errorf("a second DOCTOR changed identity: sessionId %q→%q, pid %q→%q", session, d.SessionID, pid, d.PID)
	}
	if st := c.state(t); st.Hold != "named" {
		t.Errorf("after DOCTOR: buildHold=%s, want the named hold untouched", st.Hold)
	}
	c.mustBuild(t, "ok", kate, true)
	s.holdIs(t, c, "none")
}

// samePath reports whether a and b name the same directory once symlinks
// are resolved.
func samePath(a, b string) bool {
	if a == b {
		return true
	}
	ra, errA := filepath.EvalSymlinks(a)
	rb, errB := filepath.EvalSymlinks(b)
	return errA == nil && errB == nil && ra == rb
}

// testPauseResume: RELOAD pause/resume/status snapshots and counts (docs/agent-protocol.md#6), and
// that BUILD and the pause never affect each other.
func testPauseResume(t *testing.T, s *suite) {
	c := s.dial(t)
	out := s.agent.Output()
	reload := func(action string, wantPaused bool) reloadState {
		t.Helper()
		tok := agentproto.NewToken()
		rest, before := c.request(t, "RELOAD "+action+" request="+tok, "RELOAD_STATE "+tok+" "+action+" ")
		quiet(t, "before RELOAD_STATE "+action, before)
		st := parseState(t, rest)
		if st.Paused != wantPaused {
			t.Fatalf("RELOAD %s: paused=%t, want %t", action, st.Paused, wantPaused)
		}
		return st
	}
	if st := reload("status", false); st.Hold != "none" || st.PendingClasses != 0 {
		t.Fatalf("idle agent: %v", st)
	}
	reload("pause", true)
	reload("pause", true) // idempotent
	reload("status", true)

	a1 := out.Write(t, ClassA, s.next())
	s.pollState(t, c, "pendingClasses=1 while paused", func(st reloadState) bool { return st.PendingClasses == 1 })
	b1 := out.Write(t, ClassB, s.next())
	two := s.pollState(t, c, "pendingClasses=2 while paused", func(st reloadState) bool { return st.PendingClasses == 2 })
	// PENDING's state line is the same snapshot.
	c.send(t, "PENDING")
	if evs := c.fence(t); len(evs) == 0 || evs[0].Message != "Automatic reload: "+two.String() {
		t.Errorf("PENDING while paused with two classes: first line %v, want %q", evs, "Automatic reload: "+two.String())
	}
	notApplied(t, c, a1)
	notApplied(t, c, b1)
	// A newer version of a pending class replaces it (coalesced per path).
	a2 := out.Write(t, ClassA, s.next())

	// BUILD does not touch the pause, and resume does not release a hold.
	lena := s.owner("lena")
	c.mustBuild(t, "started", lena, true)
	if st := reload("status", true); st.Hold != "named" {
		t.Fatalf("paused agent after an owned started: %v", st)
	}
	if st := reload("resume", false); st.Hold != "named" {
		t.Fatalf("RELOAD resume released or changed the hold: %v", st)
	}
	notApplied(t, c, a2)
	reload("pause", true)
	// The owner's ok releases the hold, but the changes stay pending while paused.
	c.mustBuild(t, "ok", lena, true)
	st := s.pollState(t, c, "buildHold=none", func(st reloadState) bool { return st.Hold == "none" })
	if !st.Paused || st.PendingClasses != 2 {
		t.Fatalf("after the owner's ok while paused: %v, want paused=true pendingClasses=2", st)
	}
	notApplied(t, c, a2)
	notApplied(t, c, b1)

	reload("resume", false)
	s.pollState(t, c, "pendingClasses=0 after resume", func(st reloadState) bool { return st.PendingClasses == 0 })
	s.pollApplied(t, c, a2)
	s.pollApplied(t, c, b1)
	if r := c.verify(t, ClassA, a1.SHA256); r.Status != "mismatch" || r.ObservedSHA256 != a2.SHA256 {
		t.Errorf("receipt for the replaced version of %s: %s observing %s, want mismatch observing the newest %s", ClassA, r.Status, r.ObservedSHA256, a2.SHA256)
	}
	reload("resume", false) // idempotent
}

// sixthClientTries and sixthClientGap space the sixth client's tries over
// about half a second.
const (
	sixthClientTries = 10
	sixthClientGap   = 50 * time.Millisecond
)

// testClientLimit: five clients are served, a sixth is closed without
// CONNECTED, and a slot freed by a closing client is served again (docs/agent-protocol.md#1.6).
func testClientLimit(t *testing.T, s *suite) {
	var five []*client
	for range 5 {
		five = append(five, s.dialRetry(t))
	}
	// A connection of an earlier case that the agent has not yet seen close
	// can fill a sixth slot for a moment, so one refusal proves nothing: the
	// sixth client must be refused on every try over a window long enough for
	// the agent to notice any earlier close.
	for try := range sixthClientTries {
		if _, err := s.tryDial(t); err == nil {
			t.Fatalf("a sixth client got a CONNECTED line (try %d of %d); at most 5 are served", try+1, sixthClientTries)
		} else if err != errRefused {
			t.Fatalf("sixth client (try %d of %d): %v, want the connection closed without any line", try+1, sixthClientTries, err)
		}
		time.Sleep(sixthClientGap)
	}
	for i, c := range five {
		if before := c.fence(t); len(before) > 0 {
			t.Errorf("client %d saw unexpected lines:\n%s", i, joinEvents(before))
		}
	}
	five[0].close()
	s.dialRetry(t).fence(t)
}

// testLineLimit: 512 chars (UTF-16 units, '\r' not counted) are a command;
// the 513th char closes the connection without a reply (docs/agent-protocol.md#1.4).
func testLineLimit(t *testing.T, s *suite) {
	pad := func(cmd string, units int) string {
		return strings.Repeat(" ", units-agentproto.UTF16Len(cmd)) + cmd
	}
	c := s.dial(t)
	line := pad("DOCTOR at512", 512)
	rest, _ := c.request(t, line, "DOCTOR_RESULT at512 ")
	if !strings.HasPrefix(rest, "{") {
		t.Errorf("512-char DOCTOR: payload %s", rest)
	}
	withCR := strings.Replace(line, "  ", " \r \r", 20)
	c.request(t, withCR, "DOCTOR_RESULT at512 ")
	// A non-BMP char counts two units: 510 + 2 = 512 is still a command.
	c.send(t, pad("DIAGNOSE x\U0001F600", 512))
	if before := c.fence(t); len(before) == 0 {
		t.Errorf("512-unit DIAGNOSE with a non-BMP char was not answered")
	}

	// A malformed UTF-8 sequence is one char, as Java decodes it: 511 + 1.
	c.send(t, pad("DIAGNOSE w", 511)+"\xe2\x82")
	if before := c.fence(t); len(before) == 0 {
		t.Errorf("511 chars and a cut 3-byte UTF-8 sequence (one U+FFFD, 512 chars) were not answered")
	}

	for _, tc := range []struct{ name, line string }{
		{"513 ASCII chars", pad("DOCTOR at513", 513)},
		{"511 units and a non-BMP char", pad("DIAGNOSE y\U0001F600", 513)},
		{"511 units and two malformed bytes (two U+FFFD)", pad("DIAGNOSE y", 511) + "\xc0\xaf"},
	} {
		c := s.dial(t)
		c.send(t, tc.line)
		for _, e := range c.expectEOF(t) {
			if strings.Contains(e.Message, "at513") || strings.Contains(e.Message, "y\U0001F600") {
				t.Errorf("%s: the over-long command was answered: %s", tc.name, e.Raw)
			}
		}
	}
	// The other connection is unaffected.
	c.fence(t)
}
