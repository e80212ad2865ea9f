package conformance

import (
	"context"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/buildguard/buildguard/agentproto"
)

// protocolCases run against every agent, in this order, on one agent.
var protocolCases = []testCase{
	{"handshake", testHandshake},
	{"port_file", testPortFile},
	{"eof_partial_line", testEOFPartialLine},
	{"grammar/ignored", testIgnored},
	{"grammar/doctor", testDoctorGrammar},
	{"grammar/reload", testReloadGrammar},
	{"grammar/verify", testVerifyGrammar},
	{"grammar/build", testBuildGrammar},
	{"grammar/queries", testQueries},
	{"replies_go_to_the_requester", testReplyRouting},
	{"owners/free_agent", testOwnersFree},
	{"owners/named_hold", testOwnersNamed},
	{"owners/legacy_hold", testOwnersLegacy},
	{"owners/survive_disconnect", testOwnersSurviveDisconnect},
	{"owners/one_of_two_starts_wins", testOwnersRace},
	{"failed_build_hold_and_recovery", testFailedHold},
	{"receipts", testReceipts},
	{"doctor", testDoctor},
	{"pause_resume_counts", testPauseResume},
	{"sixth_client_refused", testClientLimit},
	{"command_length_limit", testLineLimit},
	{"heartbeat", testHeartbeat},
}

// testHandshake: CONNECTED is the first line, exact, and nothing follows it
// unasked; the strict client handshake of agentproto accepts it.
func testHandshake(t *testing.T, s *suite) {
	c := s.dial(t) // checks the exact CONNECTED line
	if s.opts.Release != "" && c.agent != s.opts.Release {
		t.Errorf("CONNECTED agent = %q, want %q", c.agent, s.opts.Release)
	}
	quiet(t, "after CONNECTED", c.fence(t))

	ctx, cancel := context.WithTimeout(context.Background(), s.wait)
	defer cancel()
	conn, err := agentproto.Dial(ctx, s.agent.Port())
	if err != nil {
		t.Fatalf("agentproto.Dial: %v", err)
	}
	defer conn.Close()
	if conn.Agent() != c.agent {
		t.Errorf("second CONNECTED agent = %q, first %q", conn.Agent(), c.agent)
	}
	d, err := conn.Doctor(ctx)
	if err != nil {
		t.Fatalf("DOCTOR: %v", err)
	}
	if d.AgentVersion != c.agent {
		t.Errorf("DOCTOR agentVersion = %q, CONNECTED agent = %q", d.AgentVersion, c.agent)
	}
}

// testEOFPartialLine: a last line without "\n" before the client's EOF is
// still processed as a command (docs/agent-protocol.md#1.4), and the agent then closes.
func testEOFPartialLine(t *testing.T, s *suite) {
	watcher := s.dial(t)
	c := s.dial(t)
	c.sendRaw(t, "BUILD started")
	if err := c.nc.(interface{ CloseWrite() error }).CloseWrite(); err != nil {
		t.Fatal(err)
	}
	c.expectEOF(t)
	watcher.await(t, "Build started; holding ")
	s.holdIs(t, watcher, "legacy")
	watcher.mustBuild(t, "ok", "", true)
	s.holdIs(t, watcher, "none")
}

const zeroSHA = "0000000000000000000000000000000000000000000000000000000000000000"

// testIgnored sends malformed commands of every kind; each must be ignored
// silently (no line, connection open) and change nothing. A RELOAD status
// after each line is the fence and shows nothing changed.
func testIgnored(t *testing.T, s *suite) {
	c := s.dial(t)
	sha := strings.Repeat("a", 64)
	long := strings.Repeat("x", 65)
	lines := []string{
		"", "   ", "\t", "bogus", "PING", "HELLO world", "{\"command\":\"DOCTOR\"}",
		// DOCTOR takes the whole rest of the line as its token (docs/agent-protocol.md#4.9).
		"DOCTOR", "DOCTOR ", "DOCTOR  tok", "DOCTOR a b", "DOCTOR x/y", "DOCTOR " + long, "doctor tok", "Doctor tok",
		"DOCTORtok", "DOCTOR\ttok", "DOCTOR tök",
		// RELOAD: case-sensitive, exactly three parts, request=<tok> (docs/agent-protocol.md#4.8).
		"RELOAD PAUSE request=x", "reload pause request=x", "Reload pause request=x", "RELOAD pause",
		"RELOAD pause request=", "RELOAD pause request=a/b", "RELOAD pause request=x extra", "RELOAD pause req=x",
		"RELOAD\tpause request=x", "RELOAD pause Request=x", "RELOAD halt request=x", "RELOAD pause request=" + long,
		"RELOAD", "RELOADpause request=x", "RELOAD pause owner=x",
		// VERIFY: case-sensitive, four parts, token, binary name, lower-case hash (docs/agent-protocol.md#4.10).
		"VERIFY v A", "VERIFY v A " + sha + " extra", "VERIFY v A " + strings.ToUpper(sha), "VERIFY v A " + sha[:63],
		"VERIFY v A " + sha + "a", "VERIFY v 1A " + sha, "VERIFY v a..b " + sha, "VERIFY v .A " + sha, "VERIFY v A. " + sha,
		"VERIFY v/x A " + sha, "VERIFY " + long + " A " + sha, "verify v A " + sha, "VERIFY v A-B " + sha,
		"VERIFY v a/b " + sha, "VERIFY v " + strings.Repeat("a", 257) + " " + sha, "VERIFY\tv A " + sha,
		"VERIFY v A\u200b " + sha,
		// BUILD: keyword + literal space, at most three parts, options exactly once, owner needs request (docs/agent-protocol.md#4.7).
		"BUILD\tstarted request=x", "BUILD started request=x owner=o extra", "BUILD started request=x extra=1",
		"BUILD started owner=o", "BUILD failed owner=o", "BUILD ok owner=o", "BUILD sideways request=x", "BUILD sideways",
		"BUILD started request=", "BUILD started request=a/b", "BUILD started request=a request=b",
		"BUILD started owner=a owner=b", "BUILD started Request=x", "BUILD started REQUEST=x", "BUILD started OWNER=o request=x",
		"BUILDstarted", "BUILD", "BUILD started request=x owner=", "BUILD started request=x owner=" + long,
		"BUILD started request=" + long, "BUILD started request=x=y", "BUILD started=x", "BUILD started request=x owner=o request=y",
		"BUILD request=x started",
		// PENDING, SCAN and HEALTH must equal the keyword (docs/agent-protocol.md#4.1).
		"PENDING now", "PENDINGS", "HEALTH check", "HEALTHY", "SCAN now", "SCANS", "PEND ING",
		// strip() trims Character.isWhitespace only: a no-break space is not
		// whitespace, and splitting is on ASCII whitespace only.
		"\u00a0DOCTOR tok", "DOCTOR tok\u00a0", "\u00a0BUILD started", "BUILD started\u2003request=x",
		"RELOAD pause\u2003request=x", "RELOAD \u2003pause request=x", "VERIFY \u2003v A " + sha, "DOCTOR \u2003tok",
		// Invalid UTF-8 decodes to U+FFFD, which no token admits.
		"DOCTOR \xff", "BUILD started request=\xfe",
	}
	for _, line := range lines {
		c.send(t, line)
		tok := agentproto.NewToken()
		snapshot, before := c.request(t, "RELOAD status request="+tok, "RELOAD_STATE "+tok+" status ")
		quiet(t, "ignored command "+quote(line), before)
		if st := parseState(t, snapshot); st.Paused || st.Hold != "none" {
			t.Fatalf("ignored command %s changed the agent: %v", quote(line), st)
		}
	}
}

// quote shows a command line, escaped and cut to 80 bytes.
func quote(s string) string {
	if len(s) > 80 {
		s = s[:80] + "…"
	}
	return strconv.Quote(s)
}

// testDoctorGrammar: the accepted DOCTOR forms, with strip() and '\r'
// dropped anywhere.
func testDoctorGrammar(t *testing.T, s *suite) {
	c := s.dial(t)
	tok64 := strings.Repeat("Z", 64)
	for _, tc := range []struct{ line, tok string }{
		{"DOCTOR d1", "d1"},
		{"DOCTOR a-B_9", "a-B_9"},
		{"DOCTOR " + tok64, tok64},
		{"  DOCTOR d2 \t", "d2"},
		{"DOC\rTOR d3", "d3"},
		{"DOCTOR d4\r", "d4"},
		{"\rDOCTOR\r d5\r", "d5"},
		// strip() trims every Character.isWhitespace char (em space, ideographic
		// space, FS..US, line separator), not only ASCII.
		{"\u2003DOCTOR d6\u3000", "d6"},
		{"\u001cDOCTOR d7\u001f", "d7"},
		{"\u2028DOCTOR d8\u2029", "d8"},
	} {
		rest, before := c.request(t, tc.line, "DOCTOR_RESULT "+tc.tok+" ")
		quiet(t, "before the DOCTOR reply to "+quote(tc.line), before)
		if !strings.HasPrefix(rest, `{"requestId":"`+tc.tok+`",`) {
			t.Errorf("DOCTOR %s reply payload = %s", tc.tok, rest)
		}
	}
}

// testReloadGrammar: RELOAD splits on runs of whitespace; the reply echoes the
// token and action.
func testReloadGrammar(t *testing.T, s *suite) {
	c := s.dial(t)
	for _, tc := range []struct{ line, tok string }{
		{"RELOAD status request=r1", "r1"},
		{"RELOAD  status   request=r2", "r2"},
		{"RELOAD status\trequest=r3", "r3"},
		{"  RELOAD status request=r4  ", "r4"},
		{"RELOAD status request=" + strings.Repeat("r", 64), strings.Repeat("r", 64)},
	} {
		rest, before := c.request(t, tc.line, "RELOAD_STATE "+tc.tok+" status ")
		quiet(t, "before the reply to "+quote(tc.line), before)
		if st := parseState(t, rest); st.Paused || st.Hold != "none" {
			t.Errorf("RELOAD status on an idle agent = %v", st)
		}
	}
}

// testVerifyGrammar: accepted VERIFY forms, including '$' and Unicode
// letters in class names and whitespace runs between parts.
func testVerifyGrammar(t *testing.T, s *suite) {
	c := s.dial(t)
	sha := strings.Repeat("b", 64)
	for _, tc := range []struct{ line, tok, class string }{
		{"VERIFY v1 conformance.NeverReloaded " + sha, "v1", "conformance.NeverReloaded"},
		{"VERIFY v2 com.acme.Order$Line " + sha, "v2", "com.acme.Order$Line"},
		{"VERIFY  v3\tconformance.X   " + sha, "v3", "conformance.X"},
		{"VERIFY v4 café.Ünïcode " + sha, "v4", "café.Ünïcode"},
		{"VERIFY v5 _x.$y " + sha, "v5", "_x.$y"},
		{"VERIFY v6 " + strings.Repeat("c", 256) + " " + sha, "v6", strings.Repeat("c", 256)},
		{"VERIFY " + strings.Repeat("V", 64) + " conformance.Y " + sha, strings.Repeat("V", 64), "conformance.Y"},
	} {
		rest, before := c.request(t, tc.line, "VERIFY_RESULT "+tc.tok+" ")
		quiet(t, "before the reply to "+quote(tc.line), before)
		want := `{"requestId":"` + tc.tok + `","sessionId":"`
		if !strings.HasPrefix(rest, want) {
			t.Errorf("VERIFY %s payload = %s, want it to start with %s", tc.tok, rest, want)
		}
		if !strings.Contains(rest, `"status":"not_observed"`) {
			t.Errorf("VERIFY of a never-reloaded class %s: %s, want not_observed", tc.class, rest)
		}
	}
}

// testBuildGrammar: BUILD is case-insensitive in keyword and state, options
// come in any order, the reply uses the fixed order and a lower-case state.
func testBuildGrammar(t *testing.T, s *suite) {
	c := s.dial(t)
	// An unowned ok on a free agent is a plain scan and is acknowledged.
	for _, tc := range []struct{ line, want string }{
		{"BUILD ok request=a1", "BUILD_ACK a1 ok"},
		{"build OK request=a2", "BUILD_ACK a2 ok"},
		{"Build Ok\trequest=a3", "BUILD_ACK a3 ok"},
		{"  BUILD   ok    request=a4 ", "BUILD_ACK a4 ok"},
		// Java's case-insensitive match compares toUpperCase per char: a
		// dotless i upper-cases to I.
		{"bu\u0131ld ok request=a5", "BUILD_ACK a5 ok"},
		{"BUILD ok request=" + strings.Repeat("q", 64), "BUILD_ACK " + strings.Repeat("q", 64) + " ok"},
		// BUILD strips the remainder after the keyword (Unicode whitespace)
		// before splitting it.
		{"BUILD \u2003ok request=a6", "BUILD_ACK a6 ok"},
	} {
		msg, before := c.request(t, tc.line, "BUILD_")
		quiet(t, "before the reply to "+quote(tc.line), before)
		if msg = "BUILD_" + msg; msg != tc.want {
			t.Errorf("%s: reply %q, want %q", quote(tc.line), msg, tc.want)
		}
	}
	// Without request= there is no reply.
	c.send(t, "BUILD ok")
	quiet(t, "BUILD ok without request=", c.fence(t))

	// Options in either order; the reply has the fixed order.
	o := s.owner("grammar")
	msg, _ := c.request(t, "BUILD STARTED owner="+o+" request=g1", "BUILD_")
	if want := "ACK g1 started owner=" + o; msg != want {
		t.Fatalf("reversed options: reply BUILD_%s, want BUILD_%s", msg, want)
	}
	s.holdIs(t, c, "named")
	msg, _ = c.request(t, "bUiLd oK owner="+o+" request=g2", "BUILD_")
	if want := "ACK g2 ok owner=" + o; msg != want {
		t.Fatalf("mixed-case ok: reply BUILD_%s, want BUILD_%s", msg, want)
	}
	s.holdIs(t, c, "none")

	// An unowned started without request= installs a legacy hold silently.
	c.send(t, "BUILD Started")
	before := c.fence(t)
	if len(before) != 1 || before[0].Level != agentproto.LevelInfo || !strings.HasPrefix(before[0].Message, "Build started; holding ") {
		t.Errorf("BUILD Started without request=: want exactly the broadcast INFO \"Build started; holding …\", got:\n%s", joinEvents(before))
	}
	s.holdIs(t, c, "legacy")
	c.send(t, "build ok")
	s.holdIs(t, c, "none")
}

// testQueries: PENDING, HEALTH and DIAGNOSE answer with broadcast INFO lines
// (case-insensitive; DIAGNOSE needs no space); SCAN answers nothing.
func testQueries(t *testing.T, s *suite) {
	c := s.dial(t)
	infos := func(what string, evs []event) []string {
		t.Helper()
		var msgs []string
		for _, e := range evs {
			if e.Level != agentproto.LevelInfo || strings.TrimSpace(e.Message) == "" {
				t.Errorf("%s: want non-blank INFO lines only, got %s", what, e.Raw)
			}
			msgs = append(msgs, e.Message)
		}
		if len(msgs) == 0 {
			t.Errorf("%s: no INFO line before the next reply", what)
		}
		return msgs
	}
	for _, cmd := range []string{"PENDING", "pending", " Pending ", "pend\u0131ng"} {
		c.send(t, cmd)
		msgs := infos(cmd, c.fence(t))
		state, ok := "", false
		if len(msgs) > 0 {
			state, ok = strings.CutPrefix(msgs[0], "Automatic reload: ")
		}
		switch {
		case !ok || !reloadStateRE.MatchString(state):
			t.Errorf("%s: want the state line \"Automatic reload: paused=… buildHold=…\" first, got %q", quote(cmd), msgs)
		case parseState(t, state).Paused || parseState(t, state).Hold != "none":
			t.Errorf("%s on an idle agent: %s", quote(cmd), msgs[0])
		case !strings.Contains(strings.Join(msgs[1:], "\n"), "Nothing from this session needs a restart"):
			t.Errorf("%s: no restart-digest line saying \"Nothing from this session needs a restart\" after only method-body changes: %q", quote(cmd), msgs)
		}
	}
	for _, cmd := range []string{"HEALTH", "health", "DIAGNOSE"} {
		c.send(t, cmd)
		infos(cmd, c.fence(t))
	}
	for _, tc := range []struct{ cmd, name string }{
		{"DIAGNOSE conformance.Foo", "conformance.Foo"},
		{"diagnosefoo", "foo"},
		{"Diagnose\tconformance.Bar", "conformance.Bar"},
	} {
		c.send(t, tc.cmd)
		msgs := infos(tc.cmd, c.fence(t))
		if !strings.Contains(strings.Join(msgs, "\n"), tc.name) {
			t.Errorf("%s: no line names %q: %q", quote(tc.cmd), tc.name, msgs)
		}
	}
	// The user-supplied name comes back escaped exactly as docs/agent-protocol.md#2.3 says: \" \\
	// \t and \u00xx (lower-case hex) for other controls; DEL, U+2028 and '/'
	// raw.
	name := "a\"b\\c\u0001d\te\u007ff\u2028g/h\u001fi"
	escaped := `a\"b\\c\u0001d\te` + "\u007f" + `f` + "\u2028" + `g/h\u001fi`
	c.send(t, "DIAGNOSE "+name)
	found := false
	for _, e := range c.fence(t) {
		if strings.Contains(e.Raw, escaped) && strings.Contains(e.Message, name) {
			found = true
		}
	}
	if !found {
		t.Errorf("DIAGNOSE %q: no line carries the name escaped as %s", name, escaped)
	}
	// Invalid UTF-8 decodes to U+FFFD the way Java's decoder replaces it
	// (docs/agent-protocol.md#1.4): one U+FFFD per malformed sequence as Java delimits it, not one
	// per byte.
	for _, tc := range []struct {
		name, bytes  string
		replacements int
	}{
		{"a stray 0xff", "\xff", 1},
		{"a 3-byte sequence cut after 2 bytes", "\xe2\x82", 1},
		{"a 4-byte sequence cut after 3 bytes", "\xf0\x9f\x98", 1},
		{"an encoded surrogate", "\xed\xa0\x80", 1},
		{"an overlong 2-byte sequence", "\xc0\xaf", 2},
	} {
		c.send(t, "DIAGNOSE z"+tc.bytes+"z")
		msgs := strings.Join(infos("DIAGNOSE with "+tc.name, c.fence(t)), "\n")
		want := "z" + strings.Repeat("\uFFFD", tc.replacements) + "z"
		if !strings.Contains(msgs, want) {
			t.Errorf("DIAGNOSE with %s: no line names %q (%d U+FFFD, as Java decodes it): %q", tc.name, want, tc.replacements, msgs)
		}
	}
	for _, cmd := range []string{"SCAN", "scan", " Scan "} {
		c.send(t, cmd)
		quiet(t, quote(cmd), c.fence(t))
	}
}

// testReplyRouting: correlated replies go to the requester only; broadcast
// side effects (the hold INFO, query answers) to every client, and to the
// requester before its reply.
func testReplyRouting(t *testing.T, s *suite) {
	x, y := s.dial(t), s.dial(t)
	o := s.owner("routing")
	before := x.mustBuild(t, "started", o, true)
	if !hasInfo(before, "Build started; holding ", " class files until BUILD ok") {
		t.Errorf("the requester did not see the broadcast \"Build started; holding N class files until BUILD ok\" before its ACK:\n%s", joinEvents(before))
	}
	x.fence(t)
	x.state(t)
	x.verify(t, "conformance.NeverReloaded", zeroSHA)
	x.mustBuild(t, "started", s.owner("other"), false)
	x.send(t, "HEALTH")
	x.fence(t)
	seen := y.fence(t)
	if !hasInfo(seen, "Build started; holding ", " class files until BUILD ok") {
		t.Errorf("another client did not see the broadcast \"Build started; holding …\":\n%s", joinEvents(seen))
	}
	for _, e := range seen {
		if hasAnyPrefix(e.Message, "BUILD_ACK ", "BUILD_REJECTED ", "DOCTOR_RESULT ", "RELOAD_STATE ", "VERIFY_RESULT ") {
			t.Errorf("another client received a correlated reply: %s", e.Raw)
		}
	}
	if len(seen) < 2 {
		t.Errorf("another client saw %d line(s), want the hold INFO and the HEALTH answer:\n%s", len(seen), joinEvents(seen))
	}
	x.mustBuild(t, "ok", o, true)
	s.holdIs(t, y, "none")
}

func hasAnyPrefix(s string, prefixes ...string) bool {
	for _, p := range prefixes {
		if strings.HasPrefix(s, p) {
			return true
		}
	}
	return false
}

func hasInfo(evs []event, prefix, suffix string) bool {
	for _, e := range evs {
		if e.Level == agentproto.LevelInfo && strings.HasPrefix(e.Message, prefix) && strings.HasSuffix(e.Message, suffix) {
			return true
		}
	}
	return false
}

// testPortFile: the port file holds the decimal port and nothing else (no
// newline), was written atomically (no temp file left) and is rw-r--r-- (docs/agent-protocol.md#1.2).
func testPortFile(t *testing.T, s *suite) {
	path := s.agent.PortFile()
	if path == "" {
		t.Skip("not run: this agent was started without a port file")
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("reading the port file: %v", err)
	}
	if want := strconv.Itoa(s.agent.Port()); string(b) != want {
		t.Errorf("port file holds %q, want exactly %q (no newline, nothing else)", b, want)
	}
	fi, err := os.Lstat(path)
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Type() != 0 || fi.Mode().Perm() != 0o644 {
		t.Errorf("port file mode %v, want a regular rw-r--r-- file", fi.Mode())
	}
	entries, err := os.ReadDir(filepath.Dir(path))
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if strings.HasSuffix(e.Name(), ".reclazz-tmp") {
			t.Errorf("temporary port file %s left next to the port file", e.Name())
		}
	}
}

var heartbeatRE = regexp.MustCompile(`^\{"level":"HEARTBEAT","message":"","timestamp":"[^"]+"\}$`)

// testHeartbeat: an idle client receives the exact HEARTBEAT line within one
// period (docs/agent-protocol.md#3.2).
func testHeartbeat(t *testing.T, s *suite) {
	c := s.dial(t)
	c.wait = s.opts.heartbeat() + s.wait
	for {
		ev := c.mustNext(t)
		if ev.Level != agentproto.LevelHeartbeat {
			t.Errorf("an idle client received %s", ev.Raw)
			continue
		}
		if !heartbeatRE.MatchString(ev.Raw) {
			t.Errorf("HEARTBEAT line %s, want exactly {\"level\":\"HEARTBEAT\",\"message\":\"\",\"timestamp\":\"…\"}", ev.Raw)
		}
		return
	}
}
