package refagent_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/buildguard/buildguard/agentproto"
	"github.com/buildguard/buildguard/harness/jvm"
	"github.com/buildguard/buildguard/harness/refagent"
)

// TestReloadAndBuildHold drives one live JVM through real reloads: an
// unguarded change goes live, a held build's output stays out until the
// owner's BUILD ok, a failed build keeps it out, competing owners are refused,
// a pause keeps changes pending, and VERIFY receipts name the exact bytes.
func TestReloadAndBuildHold(t *testing.T) {
	t.Parallel()
	f := startApp(t)
	port := f.port(t)
	c := handshake(t, port)

	var doctor struct{ SessionID string }
	if err := json.Unmarshal([]byte(c.request("DOCTOR d1", "DOCTOR_RESULT d1 ")), &doctor); err != nil {
		t.Fatal(err)
	}

	// valuesStay requires the next three VALUES lines the application prints
	// from now on to equal want.
	valuesStay := func(t *testing.T, want string) {
		t.Helper()
		from := f.log.mark()
		for range 3 {
			i := f.log.waitFor(t, from, "VALUES=…", isValues)
			if got := f.log.since(i)[0]; got != want {
				t.Fatalf("the application printed %s, want %s", got, want)
			}
			from = i + 1
		}
	}
	fileSha := func(t *testing.T, dir, name string) string {
		t.Helper()
		b, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		return sha(b)
	}
	requireApplied := func(t *testing.T, class, dir string) receipt {
		t.Helper()
		hash := fileSha(t, dir, class+".class")
		r := c.pollVerify(class, hash)
		if r.Status != "applied" || r.ObservedSha256 != hash || r.SessionID != doctor.SessionID || r.CompletedAt == "" ||
			r.Source != filepath.Join(dir, class+".class") {
			t.Fatalf("receipt for %s = %+v, want applied with observedSha256 %s and session %s", class, r, hash, doctor.SessionID)
		}
		return r
	}

	t.Run("a changed class goes live", func(t *testing.T) {
		classes := compileJava(t, map[string]string{"A.java": jvm.Class("A", 2), "Lazy.java": jvm.Class("Lazy", 7)})
		mark := f.log.mark()
		f.install(t, f.outA, "Lazy.class", classes["Lazy.class"])
		f.install(t, f.outA, "A.class", classes["A.class"])
		f.log.waitFor(t, mark, "VALUES=2:1", equals("VALUES=2:1"))
		if _, ok := c.awaitEvent(limit, func(ev event) bool {
			return ev.Level == "RELOAD" && strings.HasPrefix(ev.Message, "Reloaded A (")
		}); !ok {
			t.Fatalf("no RELOAD line for the reload of A within %v", limit)
		}
		requireApplied(t, "A", f.outA)
		// Lazy was never loaded: its bytes were not redefined, so no proof.
		if r := c.pollVerify("Lazy", sha(classes["Lazy.class"])); r.Status != "unverified" {
			t.Errorf("receipt for a class that is not loaded = %+v, want unverified", r)
		}
		c.send("DIAGNOSE Lazy")
		c.await("Reference agent diagnosis for Lazy")
		c.await("Not loaded in this JVM; a changed class file arrived")
	})

	t.Run("held build goes live only on the owner's BUILD ok", func(t *testing.T) {
		c.send("BUILD started request=r1 owner=o1")
		if ev := c.await("Build "); ev.Message != "Build started; holding 0 class files until BUILD ok" {
			t.Fatalf("broadcast before the ACK = %q", ev.Message)
		}
		if ev := c.next(); ev.Message != "BUILD_ACK r1 started owner=o1" {
			t.Fatalf("reply = %s", ev.raw)
		}
		v3 := compileJava(t, map[string]string{"A.java": jvm.Class("A", 3), "B.java": jvm.Class("B", 3)})
		f.install(t, f.outA, "A.class", v3["A.class"])
		f.install(t, f.outB, "B.class", v3["B.class"])
		// The agent has seen both files and holds them...
		c.pollStatus("paused=false pendingClasses=2 pendingActions=0 buildHold=named")
		// ...and the application still runs the old code.
		valuesStay(t, "VALUES=2:1")

		other := handshake(t, port)
		for cmd, want := range map[string]string{
			"BUILD started request=r2 owner=o2": "REJECTED r2 started owner=o2",
			"BUILD ok request=r3 owner=o2":      "REJECTED r3 ok owner=o2",
			"BUILD ok request=r4":               "REJECTED r4 ok",
			"BUILD failed request=r5":           "REJECTED r5 failed",
		} {
			if got := other.request(cmd, "BUILD_"); got != want {
				t.Errorf("%s → BUILD_%s, want BUILD_%s", cmd, got, want)
			}
		}

		if got := c.request("BUILD failed request=r6 owner=o1", "BUILD_"); got != "ACK r6 failed owner=o1" {
			t.Fatalf("owner's failed → BUILD_%s", got)
		}
		if got := c.reloadStatus("s1"); got != "paused=false pendingClasses=2 pendingActions=0 buildHold=named" {
			t.Fatalf("after a failed build: %q", got)
		}
		if r := c.verify("vf", "A", sha(v3["A.class"])); r.Status == "applied" {
			t.Fatalf("held bytes reported applied: %+v", r)
		}
		valuesStay(t, "VALUES=2:1")

		// Recovery by the same owner releases the held batch at once.
		mark := f.log.mark()
		if got := c.request("BUILD started request=r7 owner=o1", "BUILD_"); got != "ACK r7 started owner=o1" {
			t.Fatalf("owner's restart → BUILD_%s", got)
		}
		if got := c.request("BUILD ok request=r8 owner=o1", "BUILD_"); got != "ACK r8 ok owner=o1" {
			t.Fatalf("owner's ok → BUILD_%s", got)
		}
		f.log.waitFor(t, mark, "VALUES=3:3", equals("VALUES=3:3"))
		for _, l := range f.log.since(mark) {
			if isValues(l) && l != "VALUES=2:1" && l != "VALUES=3:3" {
				t.Errorf("the held batch went live in parts: %s", l)
			}
		}
		requireApplied(t, "A", f.outA)
		requireApplied(t, "B", f.outB)
		c.pollStatus("paused=false pendingClasses=0 pendingActions=0 buildHold=none")
	})

	t.Run("pause keeps changes pending until resume", func(t *testing.T) {
		if got := c.request("RELOAD pause request=p1", "RELOAD_STATE p1 pause "); got != "paused=true pendingClasses=0 pendingActions=0 buildHold=none" {
			t.Fatalf("pause → %q", got)
		}
		v4 := compileJava(t, map[string]string{"A.java": jvm.Class("A", 4)})
		f.install(t, f.outA, "A.class", v4["A.class"])
		c.pollStatus("paused=true pendingClasses=1 pendingActions=0 buildHold=none")
		valuesStay(t, "VALUES=3:3")
		mark := f.log.mark()
		if got := c.request("RELOAD resume request=p2", "RELOAD_STATE p2 resume "); !strings.HasPrefix(got, "paused=false ") {
			t.Fatalf("resume → %q", got)
		}
		f.log.waitFor(t, mark, "VALUES=4:3", equals("VALUES=4:3"))
		requireApplied(t, "A", f.outA)
	})

	t.Run("identical bytes make no new attempt", func(t *testing.T) {
		before := requireApplied(t, "A", f.outA)
		a, err := os.ReadFile(filepath.Join(f.outA, "A.class"))
		if err != nil {
			t.Fatal(err)
		}
		f.install(t, f.outA, "A.class", a)
		later := time.Now().Add(time.Hour)
		if err := os.Chtimes(filepath.Join(f.outA, "A.class"), later, later); err != nil {
			t.Fatal(err)
		}
		// A later change to B goes live after the agent has looked at A again.
		v5 := compileJava(t, map[string]string{"B.java": jvm.Class("B", 5)})
		mark := f.log.mark()
		f.install(t, f.outB, "B.class", v5["B.class"])
		f.log.waitFor(t, mark, "VALUES=4:5", equals("VALUES=4:5"))
		requireApplied(t, "B", f.outB)
		if after := requireApplied(t, "A", f.outA); after.CompletedAt != before.CompletedAt {
			t.Errorf("rewriting identical bytes made a new attempt: %s → %s", before.CompletedAt, after.CompletedAt)
		}
	})

	t.Run("a shape change fails and asks for a restart", func(t *testing.T) {
		v9 := compileJava(t, map[string]string{"A.java": "public class A { public int value() { return 9; } public int extra() { return 0; } }\n"})
		f.install(t, f.outA, "A.class", v9["A.class"])
		if _, ok := c.awaitEvent(limit, func(ev event) bool {
			return ev.Level == "ERROR" && strings.HasPrefix(ev.Message, "Could not reload A: the class shape changed")
		}); !ok {
			t.Fatalf("no ERROR line for the refused reload of A within %v", limit)
		}
		r := c.pollVerify("A", sha(v9["A.class"]))
		if r.Status != "failed" || r.ObservedSha256 != sha(v9["A.class"]) || r.CompletedAt == "" {
			t.Errorf("receipt after a refused redefinition = %+v, want failed", r)
		}
		valuesStay(t, "VALUES=4:5")
		c.send("PENDING")
		c.await("Automatic reload: ")
		if got := c.next().Message; got != "One thing from this session needs a restart:" {
			t.Errorf("PENDING restart header = %q", got)
		}
		if got := c.next().Message; got != "A: class shape changed (methods or fields added or removed)" {
			t.Errorf("PENDING restart entry = %q", got)
		}
	})

	t.Run("a capture read error keeps the hold for the owner's retry", func(t *testing.T) {
		v6 := compileJava(t, map[string]string{"B.java": jvm.Class("B", 6)})
		bPath := filepath.Join(f.outB, "B.class")
		// The watcher polls every 50 ms: if it sees the fault (B.class turned
		// into a directory) before the capture, it drops B from the pending
		// files, the capture reads nothing and the hold is released. Then the
		// fault did not happen; set it up again.
		for attempt := 1; ; attempt++ {
			if got := c.request(fmt.Sprintf("BUILD started request=e1-%d owner=o3", attempt), "BUILD_"); got != fmt.Sprintf("ACK e1-%d started owner=o3", attempt) {
				t.Fatalf("start → BUILD_%s", got)
			}
			f.install(t, f.outB, "B.class", v6["B.class"])
			c.pollStatus("paused=false pendingClasses=1 pendingActions=0 buildHold=named")
			// Fault: the held file becomes unreadable as a file.
			if err := os.Remove(bPath); err != nil {
				t.Fatal(err)
			}
			if err := os.Mkdir(bPath, 0o755); err != nil {
				t.Fatal(err)
			}
			// The capture runs on its own after the ack is queued: its ERROR
			// line may come before or after the ack.
			ack := fmt.Sprintf("BUILD_ACK e2-%d ok owner=o3", attempt)
			c.send(fmt.Sprintf("BUILD ok request=e2-%d owner=o3", attempt))
			var acked, failed bool
			c.awaitEvent(3*time.Second, func(ev event) bool {
				acked = acked || ev.Level == "INFO" && ev.Message == ack
				failed = failed || ev.Level == "ERROR" && strings.HasPrefix(ev.Message, "Failed to read class file "+bPath+": ")
				return acked && failed
			})
			if !acked {
				t.Fatalf("no %s", ack)
			}
			if failed {
				break
			}
			if attempt == 3 {
				t.Fatal("no capture read error in three attempts: the watcher dropped the broken file first every time")
			}
			c.pollStatus("paused=false pendingClasses=0 pendingActions=0 buildHold=none")
			if err := os.Remove(bPath); err != nil {
				t.Fatal(err)
			}
		}
		c.pollStatus("paused=false pendingClasses=1 pendingActions=0 buildHold=named")
		valuesStay(t, "VALUES=4:5")
		if got := handshake(t, port).request("BUILD started request=e3 owner=o4", "BUILD_"); got != "REJECTED e3 started owner=o4" {
			t.Errorf("another owner after a failed capture → BUILD_%s", got)
		}

		// Repair and retry with the same owner.
		if err := os.Remove(bPath); err != nil {
			t.Fatal(err)
		}
		mark := f.log.mark()
		f.install(t, f.outB, "B.class", v6["B.class"])
		if got := c.request("BUILD ok request=e4 owner=o3", "BUILD_"); got != "ACK e4 ok owner=o3" {
			t.Fatalf("retry → BUILD_%s", got)
		}
		f.log.waitFor(t, mark, "VALUES=4:6", equals("VALUES=4:6"))
		requireApplied(t, "B", f.outB)
		c.pollStatus("paused=false pendingClasses=0 pendingActions=0 buildHold=none")
	})

	// The project's strict client (agentproto) accepts every reply of this
	// agent, including a receipt for a reload it really performed.
	t.Run("the strict agentproto client accepts the agent", func(t *testing.T) {
		ctx, cancel := context.WithTimeout(context.Background(), limit)
		defer cancel()
		p, err := agentproto.Endpoint{PortFile: f.portFile}.Resolve()
		if err != nil {
			t.Fatalf("resolving the port file: %v", err)
		}
		conn, err := agentproto.Dial(ctx, p)
		if err != nil {
			t.Fatalf("Dial: %v", err)
		}
		defer conn.Close()
		if conn.Agent() != refagent.Release {
			t.Errorf("Agent() = %q", conn.Agent())
		}
		if err := conn.ConfirmProject(ctx, f.root); err != nil {
			t.Fatalf("ConfirmProject(%s): %v", f.root, err)
		}
		doc, err := conn.Doctor(ctx)
		if err != nil || doc.Status != agentproto.DoctorObserved || doc.SessionID != doctor.SessionID || doc.BuildHold != "none" {
			t.Fatalf("Doctor = %+v, %v", doc, err)
		}
		if st, err := conn.Reload(ctx, agentproto.ReloadStatus); err != nil || st.Paused || st.BuildHold != "none" {
			t.Fatalf("Reload status = %+v, %v", st, err)
		}
		lines, err := conn.Query(ctx, "PENDING")
		if err != nil || len(lines) == 0 || !strings.HasPrefix(lines[0], "Automatic reload: paused=false ") {
			t.Fatalf("Query PENDING = %q, %v", lines, err)
		}

		if err := conn.Build(ctx, agentproto.BuildStarted, "strict-owner"); err != nil {
			t.Fatalf("Build started: %v", err)
		}
		rival, err := agentproto.Dial(ctx, p)
		if err != nil {
			t.Fatal(err)
		}
		defer rival.Close()
		if err := rival.Build(ctx, agentproto.BuildStarted, "rival-owner"); !errors.Is(err, agentproto.ErrRejected) {
			t.Errorf("rival Build started = %v, want ErrRejected", err)
		}
		v7 := compileJava(t, map[string]string{"B.java": jvm.Class("B", 7)})
		f.install(t, f.outB, "B.class", v7["B.class"])
		c.pollStatus("paused=false pendingClasses=1 pendingActions=0 buildHold=named")
		mark := f.log.mark()
		if err := conn.Build(ctx, agentproto.BuildOK, "strict-owner"); err != nil {
			t.Fatalf("Build ok: %v", err)
		}
		f.log.waitFor(t, mark, "VALUES=4:7", equals("VALUES=4:7"))
		hash := sha(v7["B.class"])
		for {
			r, err := conn.Verify(ctx, "B", hash)
			if err != nil {
				t.Fatalf("Verify: %v", err)
			}
			if r.Status == agentproto.ReceiptApplied {
				if r.ObservedSHA256 != hash || r.SessionID != doctor.SessionID {
					t.Errorf("applied receipt %+v", r)
				}
				break
			}
			if r.Status != agentproto.ReceiptRunning {
				t.Fatalf("receipt %+v, want applied", r)
			}
			time.Sleep(50 * time.Millisecond)
		}
	})
}

func isValues(s string) bool { return strings.HasPrefix(s, "VALUES=") }

func equals(want string) func(string) bool { return func(s string) bool { return s == want } }
