package fakeagent

import (
	"fmt"
	"strings"
	"testing"

	"github.com/buildguard/buildguard/agentproto"
	"github.com/buildguard/buildguard/internal/testsupport/wait"
)

// verify sends a VERIFY and returns the decoded payload.
func verify(t *testing.T, c *rawClient, tok, class, hash string) map[string]any {
	t.Helper()
	c.send("VERIFY " + tok + " " + class + " " + hash)
	got := c.probe()
	if len(got) != 1 {
		t.Fatalf("VERIFY answered %q", got)
	}
	return decodeJSON(t, got[0], "VERIFY_RESULT "+tok+" ")
}

func TestVerifyReceipts(t *testing.T) {
	t.Parallel()
	s := quiet(t, WithSessionID("0b6f8d0e-0000-4000-8000-000000000001"))
	c := dial(t, s)

	// Field order and the not_observed answer.
	c.send("VERIFY v1 com.acme.A " + sha("a"))
	got := c.probe()
	want := `VERIFY_RESULT v1 {"requestId":"v1","sessionId":"0b6f8d0e-0000-4000-8000-000000000001","className":"com.acme.A","expectedSha256":"` + sha("a") +
		`","observedSha256":"","status":"not_observed","source":"","detail":"No retained reload receipt in this agent session","completedAt":""}`
	if len(got) != 1 || got[0] != want {
		t.Fatalf("got %q\nwant %q", got, want)
	}

	b := s.StartBatch(BatchEntry{Class: "com.acme.A", Source: "/p/A.class", Bytes: []byte("a")}, BatchEntry{Class: "com.acme.B", Source: "/p/B.class", Bytes: []byte("b")})
	if m := verify(t, c, "v2", "com.acme.A", sha("a")); m["status"] != StatusRunning || m["detail"] != "Reload batch has not completed" || m["completedAt"] != "" || m["observedSha256"] != sha("a") {
		t.Fatalf("running: %v", m)
	}
	b.FinishClass("com.acme.B", StatusFailed, "VerifyError: bad")
	b.Finish(StatusApplied, "ok")
	if m := verify(t, c, "v3", "com.acme.A", sha("a")); m["status"] != StatusApplied || m["completedAt"] == "" || m["source"] != "/p/A.class" {
		t.Fatalf("applied: %v", m)
	}
	if m := verify(t, c, "v4", "com.acme.B", sha("b")); m["status"] != StatusFailed || m["detail"] != "VerifyError: bad" {
		t.Fatalf("failed sticks: %v", m)
	}
	if m := verify(t, c, "v5", "com.acme.A", sha("other")); m["status"] != StatusMismatch ||
		m["detail"] != "The latest attempted bytes differ from the requested bytes" || m["observedSha256"] != sha("a") || m["source"] != "/p/A.class" {
		t.Fatalf("mismatch: %v", m)
	}

	// A new batch from the same source drops the old receipt; finishing the
	// old batch afterwards does not resurrect anything.
	old := s.StartBatch(BatchEntry{Class: "com.acme.C", Source: "/p/C.class", Bytes: []byte("c1")})
	s.StartBatch(BatchEntry{Class: "com.acme.C2", Source: "/p/C.class", Bytes: []byte("c2")})
	old.Finish(StatusApplied, "late")
	if m := verify(t, c, "v6", "com.acme.C", sha("c1")); m["status"] != StatusNotObserved {
		t.Fatalf("same-source receipt not dropped: %v", m)
	}
	if m := verify(t, c, "v7", "com.acme.C2", sha("c2")); m["status"] != StatusRunning {
		t.Fatalf("superseding batch: %v", m)
	}

	s.Evict("com.acme.A")
	if m := verify(t, c, "v8", "com.acme.A", sha("a")); m["status"] != StatusNotObserved {
		t.Fatalf("evicted: %v", m)
	}

	// Long source and detail are cut to 200 chars; escaping applies.
	s.SetReceipt("x.Y", Receipt{SHA256: sha("y"), Source: "/" + strings.Repeat("s", 300), Status: StatusUnverified, Detail: "warn \"q\"\n" + strings.Repeat("d", 300), CompletedAt: "2026-09-08T09:12:44.371Z"})
	m := verify(t, c, "v9", "x.Y", sha("y"))
	if len(m["source"].(string)) != 200 || len(m["detail"].(string)) != 200 || !strings.HasPrefix(m["detail"].(string), "warn \"q\"\n") || m["status"] != StatusUnverified {
		t.Fatalf("bounds: %v", m)
	}

	// A new session has a new id and an empty ledger.
	id := s.RegenerateSession()
	if m := verify(t, c, "v10", "x.Y", sha("y")); m["sessionId"] != id || m["status"] != StatusNotObserved || id == "0b6f8d0e-0000-4000-8000-000000000001" {
		t.Fatalf("regenerated: %v", m)
	}
}

func TestLedgerCapacity(t *testing.T) {
	t.Parallel()
	s := quiet(t)
	for i := 0; i < MaxReceipts+3; i++ {
		s.SetReceipt(fmt.Sprintf("c.C%d", i), Receipt{SHA256: sha("x"), Status: StatusApplied})
	}
	names := s.Receipts()
	if len(names) != MaxReceipts || names[0] != "c.C3" {
		t.Fatalf("%d receipts, oldest %q", len(names), names[0])
	}
}

func TestVerifyUnwired(t *testing.T) {
	t.Parallel()
	s := quiet(t, WithUnwired(Unwired{Verifier: true}))
	c := dial(t, s)
	c.send("VERIFY v1 a.B " + sha("a"))
	if got := c.probe(); len(got) != 0 {
		t.Fatalf("unwired verifier answered %q", got)
	}
	s.SetUnwired(Unwired{})
	verify(t, c, "v2", "a.B", sha("a"))
}

func TestDoctorFieldsInOrder(t *testing.T) {
	t.Parallel()
	s := quiet(t, WithAgent("1.1.1"), WithSessionID("sess-1"), WithHold("O"), WithDoctor(Evidence{
		PID: "48213", WorkingDirectory: "/p", WatchedDirectories: []string{"/p/target/classes", "/p/src/main/resources"},
	}))
	c := dial(t, s)
	c.send("DOCTOR d1")
	got := c.probe()
	want := `DOCTOR_RESULT d1 {"requestId":"d1","status":"observed","detail":"` + doctorDetail + `","sessionId":"sess-1","agentVersion":"1.1.1","pid":"48213",` +
		`"javaVersion":"17.0.12","vmName":"OpenJDK 64-Bit Server VM","workingDirectory":"/p","watcherState":"watching","buildHold":"named",` +
		`"watchedDirectoryCount":2,"unwatchableDirectoryCount":0,"watchSampleTruncated":false,"watchedDirectories":["/p/target/classes","/p/src/main/resources"],` +
		`"buildOwnershipSupported":true,"verifySupported":true,"scanSupported":true,"reloadConfirmed":false}`
	if len(got) != 1 || got[0] != want {
		t.Fatalf("got  %q\nwant %q", got, want)
	}
	if s.HoldState() != HoldNamed {
		t.Fatal("DOCTOR changed the hold")
	}
}

func TestDoctorDefaultsToServerDir(t *testing.T) {
	t.Parallel()
	s := quiet(t)
	c := dial(t, s)
	c.send("DOCTOR d")
	m := decodeJSON(t, c.probe()[0], "DOCTOR_RESULT d ")
	if m["workingDirectory"] != s.Dir() || m["sessionId"] != s.SessionID() || m["pid"] == "" {
		t.Fatalf("defaults: %v", m)
	}
}

func TestDoctorStartupStages(t *testing.T) {
	t.Parallel()
	for stage, want := range map[int]string{
		1: `"sessionId":"","watcherState":"unavailable","buildHold":"unavailable","buildOwnershipSupported":false,"verifySupported":false,"scanSupported":false`,
		2: `"sessionId":"S","watcherState":"unavailable","buildHold":"unavailable","buildOwnershipSupported":false,"verifySupported":true,"scanSupported":false`,
		3: `"sessionId":"S","watcherState":"unavailable","buildHold":"unavailable","buildOwnershipSupported":false,"verifySupported":true,"scanSupported":true`,
		4: `"sessionId":"S","watcherState":"starting","buildHold":"none","buildOwnershipSupported":true,"verifySupported":true,"scanSupported":true`,
	} {
		t.Run(fmt.Sprint(stage), func(t *testing.T) {
			t.Parallel()
			s := quiet(t, WithUnwired(Stage(stage)), WithSessionID("S"), WithDoctor(Evidence{WatcherState: WatcherStarting}))
			c := dial(t, s)
			c.send("DOCTOR d")
			m := decodeJSON(t, c.probe()[0], "DOCTOR_RESULT d ")
			gotS := fmt.Sprintf(`"sessionId":%q,"watcherState":%q,"buildHold":%q,"buildOwnershipSupported":%v,"verifySupported":%v,"scanSupported":%v`,
				m["sessionId"], m["watcherState"], m["buildHold"], m["buildOwnershipSupported"], m["verifySupported"], m["scanSupported"])
			if gotS != want {
				t.Fatalf("stage %d:\n got %s\nwant %s", stage, gotS, want)
			}
		})
	}
}

func TestDoctorSampleBounds(t *testing.T) {
	t.Parallel()
	var dirs []string
	for i := 0; i < 10; i++ {
		dirs = append(dirs, fmt.Sprintf("/p/d%d", i))
	}
	long := "/" + strings.Repeat("l", 256) // 257 chars: omitted from the sample
	for _, tc := range []struct {
		name      string
		e         Evidence
		count     float64
		sample    int
		truncated bool
	}{
		{"ten dirs", Evidence{WatchedDirectories: dirs}, 10, 8, true},
		{"long path", Evidence{WatchedDirectories: []string{"/a", long}}, 2, 1, true},
		{"count above sample", Evidence{WatchedDirectories: []string{"/a"}, WatchedDirectoryCount: 5, UnwatchableDirectoryCount: 2}, 5, 1, true},
		{"none", Evidence{}, 0, 0, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			s := quiet(t, WithDoctor(tc.e))
			c := dial(t, s)
			c.send("DOCTOR d")
			m := decodeJSON(t, c.probe()[0], "DOCTOR_RESULT d ")
			if m["watchedDirectoryCount"] != tc.count || len(m["watchedDirectories"].([]any)) != tc.sample || m["watchSampleTruncated"] != tc.truncated {
				t.Fatalf("got %v", m)
			}
		})
	}
}

func TestDoctorUnavailable(t *testing.T) {
	t.Parallel()
	want := `DOCTOR_RESULT d {"requestId":"d","status":"unavailable","detail":"Doctor evidence unavailable or exceeds bounded message size"}`
	for name, e := range map[string]Evidence{
		"forced":       {Unavailable: true},
		"long workdir": {WorkingDirectory: "/" + strings.Repeat("w", 512)},
		"json bound":   {WorkingDirectory: "/" + strings.Repeat("w", 500), VMName: strings.Repeat("v", 500), JavaVersion: strings.Repeat("j", 500), PID: strings.Repeat("1", 500), WatchedDirectories: []string{"/" + strings.Repeat("a", 250), "/" + strings.Repeat("b", 250), "/" + strings.Repeat("c", 250), "/" + strings.Repeat("d", 250), "/" + strings.Repeat("e", 250), "/" + strings.Repeat("f", 250)}},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			s := quiet(t, WithDoctor(e))
			c := dial(t, s)
			c.send("DOCTOR d")
			if got := c.probe(); len(got) != 1 || got[0] != want {
				t.Fatalf("got %q", got)
			}
		})
	}
}

func TestReloadControl(t *testing.T) {
	t.Parallel()
	s := quiet(t)
	c := dial(t, s)
	s.SetPending(0, 3)
	c.send("RELOAD pause request=p")
	c.send("RELOAD pause request=p2") // idempotent
	got := c.probe()
	if len(got) != 2 || got[1] != "RELOAD_STATE p2 pause paused=true pendingClasses=0 pendingActions=3 buildHold=none" || !s.Paused() {
		t.Fatalf("pause: %q", got)
	}
	s.AddPendingClass("a.A", "/p/A.class", []byte("a"))
	s.SetHold("O")
	c.send("RELOAD resume request=r")
	got = c.probe()
	if len(got) != 1 || got[0] != "RELOAD_STATE r resume paused=false pendingClasses=1 pendingActions=3 buildHold=named" {
		t.Fatalf("resume under hold: %q", got)
	}
	s.Sync(wait.Context(t, limit))
	if n, _ := s.Pending(); n != 1 || s.HoldState() != HoldNamed {
		t.Fatal("resume admitted files or released the hold")
	}
	c.send("PENDING")
	if got := c.probe(); got[0] != "Automatic reload: paused=false pendingClasses=1 pendingActions=3 buildHold=named" {
		t.Fatalf("PENDING: %q", got)
	}
	s.SetRestartLedger("One thing needs a restart:", "a.A changed its shape 20 times")
	c.send("PENDING")
	if got := c.probe(); len(got) != 3 || got[2] != "a.A changed its shape 20 times" {
		t.Fatalf("PENDING ledger: %q", got)
	}
	s.SetUnwired(Unwired{ReloadControl: true})
	c.send("RELOAD status request=s")
	c.send("PENDING")
	if got := c.probe(); len(got) != 2 || got[0] != "One thing needs a restart:" {
		t.Fatalf("unwired reload control: %q", got)
	}
}

func TestScanAdmitsOnlyWhenFree(t *testing.T) {
	t.Parallel()
	s := quiet(t, WithPaused())
	s.AddPendingClass("a.A", "/p/A.class", []byte("a"))
	c := dial(t, s)
	c.send("SCAN")
	c.probe()
	s.Sync(wait.Context(t, limit))
	if n, _ := s.Pending(); n != 1 {
		t.Fatal("SCAN bypassed the pause")
	}
	s.SetPaused(false)
	s.Sync(wait.Context(t, limit))
	if n, _ := s.Pending(); n != 0 {
		t.Fatal("resume did not admit")
	}
	if r, _ := s.Receipt("a.A"); r.Status != StatusApplied {
		t.Fatalf("receipt %+v", r)
	}
}

func TestHealthAndDiagnose(t *testing.T) {
	t.Parallel()
	s := quiet(t, WithHold(""), WithPaused(), WithDoctor(Evidence{WatchedDirectories: []string{"/a", "/b"}, UnwatchableDirectoryCount: 1}))
	s.SetReceipt("a.A", Receipt{SHA256: sha("a"), Status: StatusApplied, Detail: "ok", Source: "/p/A.class"})
	c := dial(t, s)
	c.send("HEALTH")
	got := c.probe()
	if len(got) != 6 || got[2] != "2 directories watched, and 1 that could not be." ||
		got[4] != "Automatic reload paused; pending class files=0, pending actions=0" || !strings.HasPrefix(got[5], "Build holding 0 class files since ") {
		t.Fatalf("HEALTH: %q", got)
	}
	c.send("DIAGNOSE a.A")
	if got := c.probe(); len(got) != 2 || got[1] != "Last attempt: applied (ok) from /p/A.class" {
		t.Fatalf("DIAGNOSE: %q", got)
	}
	s.SetUnwired(Unwired{Diagnoser: true, Health: true})
	c.send("DIAGNOSE a.A")
	c.send("HEALTH")
	got = c.probe()
	for _, m := range got {
		if strings.Contains(m, "diagnosis") || strings.Contains(m, "directories watched") {
			t.Fatalf("unwired: %q", got)
		}
	}
	if len(got) != 5 {
		t.Fatalf("reduced HEALTH: %q", got)
	}
}

func TestHoldWarning(t *testing.T) {
	t.Parallel()
	s := NewServer(t, WithHeartbeat(-1), WithConfigFunc(func(c *Config) { c.HoldWarning = 30 * 1e6 }))
	c := dial(t, s)
	c.send("BUILD started request=a owner=O")
	ev := c.next()
	for ev.Level != agentproto.LevelWarn {
		ev = c.next()
	}
	if !strings.HasPrefix(ev.Message, "Build result missing after five minutes; Build holding 0 class files since ") || !strings.HasSuffix(ev.Message, "; waiting for BUILD ok") {
		t.Fatalf("WARN %q", ev.Message)
	}
	c.send("HEALTH")
	for _, m := range c.probe() {
		if strings.HasPrefix(m, "Build result missing") {
			t.Fatal("hold warning repeated")
		}
	}
}
