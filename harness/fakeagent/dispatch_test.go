package fakeagent

import (
	"reflect"
	"strings"
	"testing"
)

const sha0 = "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08"

// TestGrammar sends each command to a fresh agent and checks the lines the
// requester received before a DOCTOR probe: the exact replies, or nothing for
// an ignored command (docs/agent-protocol.md#4.1–4.10).
func TestGrammar(t *testing.T) {
	t.Parallel()
	started := "Build started; holding 0 class files until BUILD ok"
	cases := []struct {
		cmd  string
		want []string // message prefixes, in order
	}{
		// RELOAD (docs/agent-protocol.md#4.8): case-sensitive, exactly 3 parts.
		{"RELOAD pause request=p1", []string{"RELOAD_STATE p1 pause paused=true pendingClasses=0 pendingActions=0 buildHold=none"}},
		{"RELOAD resume request=p1", []string{"RELOAD_STATE p1 resume paused=false pendingClasses=0 pendingActions=0 buildHold=none"}},
		{"RELOAD status request=p1", []string{"RELOAD_STATE p1 status paused=false pendingClasses=0 pendingActions=0 buildHold=none"}},
		{"RELOAD  status \t request=p1", []string{"RELOAD_STATE p1 status paused=false"}},
		{"  RELOAD status request=p1  ", []string{"RELOAD_STATE p1 status"}},
		{"reload status request=p1", nil},
		{"RELOAD Status request=p1", nil},
		{"RELOAD status request=p1 x", nil},
		{"RELOAD status", nil},
		{"RELOAD status REQUEST=p1", nil},
		{"RELOAD status request=", nil},
		{"RELOAD status request=a/b", nil},
		{"RELOAD\tstatus request=p1", nil},
		// DOCTOR (docs/agent-protocol.md#4.9): the token is the whole remainder.
		{"DOCTOR d1", []string{"DOCTOR_RESULT d1 {\"requestId\":\"d1\",\"status\":\"observed\""}},
		{"DOCTOR " + strings.Repeat("a", 64), []string{"DOCTOR_RESULT " + strings.Repeat("a", 64) + " {"}},
		{"DOCTOR " + strings.Repeat("a", 65), nil},
		{"DOCTOR", nil},
		{"DOCTOR a b", nil},
		{"DOCTOR x/y", nil},
		{"DOCTOR  tok", nil},
		{"doctor d1", nil},
		{"\t DOCTOR d1 \u2003", []string{"DOCTOR_RESULT d1 {"}},
		// VERIFY (docs/agent-protocol.md#4.10).
		{"VERIFY v7 com.acme.OrderService$Line " + sha0, []string{`VERIFY_RESULT v7 {"requestId":"v7","sessionId":"`}},
		{"VERIFY v7 app.Örnek " + sha0, []string{`VERIFY_RESULT v7 {`}},
		{"VERIFY  v7   a.B   " + sha0, []string{`VERIFY_RESULT v7 {`}},
		{"verify v7 a.B " + sha0, nil},
		{"VERIFY v7 a.B", nil},
		{"VERIFY v7 a.B " + sha0 + " extra", nil},
		{"VERIFY v7 a.B " + strings.ToUpper(sha0), nil},
		{"VERIFY v7 a..B " + sha0, nil},
		{"VERIFY v7 a.1B " + sha0, nil},
		{"VERIFY v7 a/B " + sha0, nil},
		{"VERIFY v7 " + strings.Repeat("A", 257) + " " + sha0, nil},
		{"VERIFY v/7 a.B " + sha0, nil},
		// BUILD (docs/agent-protocol.md#4.7): keyword and state case-insensitive, options case-sensitive.
		{"BUILD started request=7f3c owner=ci-build-42", []string{started, "BUILD_ACK 7f3c started owner=ci-build-42"}},
		{"BUILD started owner=ci-build-42 request=7f3c", []string{started, "BUILD_ACK 7f3c started owner=ci-build-42"}},
		{"build Started request=a", []string{started, "BUILD_ACK a started"}},
		{"BUıLD started request=a", []string{started, "BUILD_ACK a started"}},
		{"BUILD OK request=a", []string{"BUILD_ACK a ok"}},
		{"BUILD ok owner=bob request=q2", []string{"BUILD_REJECTED q2 ok owner=bob"}},
		{"BUILD FAILED request=f owner=o", []string{"BUILD_REJECTED f failed owner=o"}},
		{"BUILD failed request=f", []string{"Build failed; holding 0 class files until BUILD ok", "BUILD_ACK f failed"}},
		{"BUILD started", []string{started}},
		{"BUILD started owner=b", nil},
		{"BUILD\tstarted request=a", nil},
		{"BUILD started request=a owner=b extra", nil},
		{"BUILD started request=a request=b", nil},
		{"BUILD started owner=a owner=b request=c", nil},
		{"BUILD started Request=a", nil},
		{"BUILD started request=a Owner=b", nil},
		{"BUILD started request=a other=b", nil},
		{"BUILD starting request=a", nil},
		{"BUILD request=a", nil},
		{"BUILD started request=a owner=", nil},
		{"BUILD started request=a owner=x.y", nil},
		{"BUILD started request=" + strings.Repeat("r", 65), nil},
		{"BUILD ", nil},
		{"BUILD", nil},
		{"BUILDstarted request=a", nil},
		// Queries (docs/agent-protocol.md#4.4–4.6).
		{"PENDING", []string{"Automatic reload: paused=false pendingClasses=0 pendingActions=0 buildHold=none", "Nothing from this session needs a restart."}},
		{" pending ", []string{"Automatic reload: ", "Nothing from this session"}},
		{"PENDING x", nil},
		{"Health", []string{"Reclazz 1.1.1, up 0 minutes.", "Nothing has reloaded yet this session.", "0 directories watched.", "Nothing is waiting on a restart."}},
		{"HEALTHY", nil},
		{"diagnosefoo", []string{"Reclazz diagnosis for foo", "No reload attempt for foo"}},
		{"DIAGNOSE   a.B  ", []string{"Reclazz diagnosis for a.B", "No reload attempt"}},
		{"DIAGNOSE", []string{"Give a class name, for example"}},
		{"DIAGNOSE \"<x>\"", []string{"Reclazz diagnosis for \"<x>\"", "No reload attempt"}},
		{"SCAN", nil},
		{"scan", nil},
		// Anything else.
		{"", nil},
		{"   ", nil},
		{"HELLO", nil},
		{"SCAN;", nil},
		{"{\"cmd\":\"SCAN\"}", nil},
	}
	for _, tc := range cases {
		t.Run(tc.cmd, func(t *testing.T) {
			t.Parallel()
			s := quiet(t)
			c := dial(t, s)
			c.send(tc.cmd)
			got := c.probe()
			if len(got) != len(tc.want) {
				t.Fatalf("got %q, want %d lines %q", got, len(tc.want), tc.want)
			}
			for i := range got {
				if !strings.HasPrefix(got[i], tc.want[i]) {
					t.Fatalf("line %d = %q, want prefix %q", i, got[i], tc.want[i])
				}
			}
			if cmds := s.Commands(); cmds[0] != tc.cmd {
				t.Fatalf("recorded %q, want %q", cmds[0], tc.cmd)
			}
		})
	}
}

// TestRepliesGoToRequester checks that correlated replies reach only the
// requesting connection while side effects and queries are broadcast.
func TestRepliesGoToRequester(t *testing.T) {
	t.Parallel()
	s := quiet(t)
	a := dial(t, s)
	b := dial(t, s)
	a.send("BUILD started request=r owner=o")
	a.send("HEALTH")
	if got := a.probe(); len(got) != 7 || got[1] != "BUILD_ACK r started owner=o" {
		t.Fatalf("requester got %q", got)
	}
	got := b.probe()
	if len(got) != 6 || got[0] != "Build started; holding 0 class files until BUILD ok" || !strings.HasPrefix(got[1], "Reclazz 1.1.1") {
		t.Fatalf("other client got %q", got)
	}
	for _, m := range got {
		if strings.HasPrefix(m, "BUILD_ACK") {
			t.Fatal("ACK leaked to another client")
		}
	}
}

// TestPipelinedCommands checks that pipelined commands are answered in order.
func TestPipelinedCommands(t *testing.T) {
	t.Parallel()
	s := quiet(t)
	c := dial(t, s)
	if _, err := c.nc.Write([]byte("RELOAD pause request=a\nRELOAD status request=b\nRELOAD resume request=c\n")); err != nil {
		t.Fatal(err)
	}
	got := c.probe()
	want := []string{
		"RELOAD_STATE a pause paused=true pendingClasses=0 pendingActions=0 buildHold=none",
		"RELOAD_STATE b status paused=true pendingClasses=0 pendingActions=0 buildHold=none",
		"RELOAD_STATE c resume paused=false pendingClasses=0 pendingActions=0 buildHold=none",
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("got %q", got)
	}
}

func TestJavaStringHelpers(t *testing.T) {
	t.Parallel()
	for in, want := range map[string][]string{
		"":         {""},
		"a":        {"a"},
		"a b":      {"a", "b"},
		"a \t\vb":  {"a", "b"},
		" a":       {"", "a"},
		"a ":       {"a"},
		"  ":       {},
		"a\u00a0b": {"a\u00a0b"},
	} {
		if got := javaSplit(in); !reflect.DeepEqual(got, want) && !(len(got) == 0 && len(want) == 0) {
			t.Errorf("javaSplit(%q) = %q, want %q", in, got, want)
		}
	}
	if javaStrip("\u00a0x\u00a0") != "\u00a0x\u00a0" || javaStrip("\u2003\x1cx\t\r\n") != "x" {
		t.Error("javaStrip differs from String.strip")
	}
	if !foldEqual("ſcan", "SCAN") || foldEqual("SCAN ", "SCAN") || !foldPrefix("diagnoseX", "DIAGNOSE") {
		t.Error("case folding differs from equalsIgnoreCase/regionMatches")
	}
}
