package conformance_test

import (
	"context"
	"os"
	"os/exec"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/buildguard/buildguard/harness/conformance"
	"github.com/buildguard/buildguard/harness/fakeagent"
)

// brokenEnv selects the broken fake TestBrokenAgentHelper checks.
const brokenEnv = "CONFORMANCE_BROKEN_AGENT"

// brokenAgents are fakes with one deliberate deviation from
// docs/agent-protocol.md each, and the cases that must fail on it.
var brokenAgents = []struct {
	name    string
	opts    []fakeagent.Option
	catches []string
}{
	{"handshake version as a string", []fakeagent.Option{fakeagent.WithFaults(fakeagent.Faults{Handshake: fakeagent.HandshakeVersionString})},
		[]string{"handshake"}},
	{"closes the connection on a malformed command", []fakeagent.Option{fakeagent.WithFaults(fakeagent.Faults{
		DisconnectOn: func(line string) bool { return strings.HasPrefix(line, "BUILD\t") }})},
		[]string{"grammar/ignored"}},
	{"acks without the owner suffix", []fakeagent.Option{fakeagent.WithUnwired(fakeagent.Unwired{AckWithoutOwner: true})},
		[]string{"owners/free_agent", "owners/named_hold", "failed_build_hold_and_recovery"}},
	{"rejects a same-owner restart", []fakeagent.Option{fakeagent.WithFaults(fakeagent.Faults{
		RejectBuild: func(state, owner string) bool { return state == "failed" && owner != "" }})},
		[]string{"owners/named_hold", "failed_build_hold_and_recovery"}},
	{"keeps the hold after the first accepted ok", []fakeagent.Option{fakeagent.WithAcceptance(failOnce())},
		[]string{"eof_partial_line"}},
	{"broadcasts DOCTOR replies", []fakeagent.Option{fakeagent.WithReply(fakeagent.ForKind(fakeagent.BroadcastReply, fakeagent.KindDoctor))},
		[]string{"replies_go_to_the_requester"}},
	{"claims reloadConfirmed", []fakeagent.Option{fakeagent.WithReply(fakeagent.ForKind(fakeagent.SetField("reloadConfirmed", "true"), fakeagent.KindDoctor))},
		[]string{"doctor"}},
	{"receipt names other bytes", []fakeagent.Option{fakeagent.WithReply(fakeagent.ForKind(fakeagent.SetField("observedSha256", `"`+strings.Repeat("f", 64)+`"`), fakeagent.KindVerify))},
		[]string{"receipts"}},
	{"pause reports a stale count", []fakeagent.Option{fakeagent.WithReply(fakeagent.ForKind(func(r *fakeagent.Reply) {
		r.Message = strings.Replace(r.Message, "pendingClasses=2", "pendingClasses=1", 1)
	}, fakeagent.KindReload))},
		[]string{"pause_resume_counts"}},
	{"serves six clients", []fakeagent.Option{func(c *fakeagent.Config) { c.MaxClients = 6 }},
		[]string{"sixth_client_refused"}},
}

// failOnce is an acceptance whose first capture fails to read a class file
// (the hold stays) and whose later captures succeed.
func failOnce() func(context.Context, string) fakeagent.Outcome {
	var calls atomic.Int32
	return func(context.Context, string) fakeagent.Outcome {
		if calls.Add(1) == 1 {
			return fakeagent.AcceptReadError
		}
		return fakeagent.AcceptSuccess
	}
}

// TestSuiteCatchesBrokenAgents proves the suite can fail: each broken fake
// runs the suite in a child test process, which must fail exactly the cases
// that check the broken rule, while grammar/reload still passes (so the
// failures are the deviation's, not a broken setup's).
func TestSuiteCatchesBrokenAgents(t *testing.T) {
	t.Parallel()
	for i, b := range brokenAgents {
		t.Run(b.name, func(t *testing.T) {
			t.Parallel()
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
			defer cancel()
			cmd := exec.CommandContext(ctx, os.Args[0], "-test.run=^TestBrokenAgentHelper$", "-test.v", "-test.count=1")
			cmd.Env = append(os.Environ(), brokenEnv+"="+string(rune('a'+i)))
			out, err := cmd.CombinedOutput()
			if err == nil {
				t.Fatalf("the suite passed an agent that %s:\n%s", b.name, out)
			}
			for _, c := range b.catches {
				if !strings.Contains(string(out), "--- FAIL: TestBrokenAgentHelper/"+c+" ") {
					t.Errorf("case %s did not fail on an agent that %s", c, b.name)
				}
			}
			if b.catches[0] != "handshake" && !strings.Contains(string(out), "--- PASS: TestBrokenAgentHelper/grammar/reload ") {
				t.Errorf("grammar/reload did not pass; the child run is broken")
			}
			if t.Failed() {
				t.Logf("child output:\n%s", out)
			}
		})
	}
}

// TestBrokenAgentHelper runs the suite against one broken fake; it is the
// child process of TestSuiteCatchesBrokenAgents and is skipped otherwise.
func TestBrokenAgentHelper(t *testing.T) {
	sel := os.Getenv(brokenEnv)
	if sel == "" {
		t.Skip("helper process of TestSuiteCatchesBrokenAgents")
	}
	b := brokenAgents[int(sel[0]-'a')]
	conformance.Run(t, func(t *testing.T) conformance.Agent {
		srv := fakeagent.NewServer(t, append([]fakeagent.Option{fakeagent.WithHeartbeat(fakeHeartbeat)}, b.opts...)...)
		return &fakeAgent{srv: srv, out: &fakeOutput{srv: srv, dir: t.TempDir()}}
	}, conformance.Options{Wait: 5 * time.Second, Heartbeat: fakeHeartbeat})
}
