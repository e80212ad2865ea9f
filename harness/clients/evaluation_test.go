//go:build unix

package clients

import (
	"errors"
	"strings"
	"testing"
)

var (
	testHash    = strings.Repeat("a", 64)
	testBase    = Identity{PID: "42", Nonce: "n1", Session: "s1"}
	testReceipt = Receipt{Status: "applied", ClassName: "Service", ExpectedSha256: testHash, ObservedSha256: testHash, SessionID: "s1"}
	testBefore  = Probe{PID: "42", Nonce: "n1", Counter: 1, Value: 1}
	testProbe   = Probe{PID: "42", Nonce: "n1", Counter: 2, Value: 2}
)

func startedRecorder() *Recorder {
	r := NewRecorder("t")
	r.SetBaseline(testBase)
	return r
}

func TestOracleProvesARealCompletion(t *testing.T) {
	t.Parallel()
	r := startedRecorder()
	r.Run("setup", func() error {
		if !r.Claim("Service", testHash, 2, testReceipt, testReceipt, testBefore, testProbe) {
			t.Error("a real completion was not proven")
		}
		return nil
	})
	s := r.Evaluation(nil).Summary
	if s.CompletedClaims != 1 || s.FalseCompletions != 0 {
		t.Errorf("claims %d false %d, want 1 and 0", s.CompletedClaims, s.FalseCompletions)
	}
}

func TestOracleRejectsEachWrongPart(t *testing.T) {
	t.Parallel()
	rc := func(f func(*Receipt)) Receipt { c := testReceipt; f(&c); return c }
	pr := func(f func(*Probe)) Probe { c := testProbe; f(&c); return c }
	cases := map[string]struct {
		rc Receipt
		p  Probe
	}{
		"hash":    {rc(func(c *Receipt) { c.ObservedSha256 = strings.Repeat("b", 64) }), testProbe},
		"session": {rc(func(c *Receipt) { c.SessionID = "s2" }), testProbe},
		"class":   {rc(func(c *Receipt) { c.ClassName = "App" }), testProbe},
		"status":  {rc(func(c *Receipt) { c.Status = "mismatch" }), testProbe},
		"value":   {testReceipt, pr(func(c *Probe) { c.Value = 1 })},
		"pid":     {testReceipt, pr(func(c *Probe) { c.PID = "43" })},
		"nonce":   {testReceipt, pr(func(c *Probe) { c.Nonce = "n2" })},
		"counter": {testReceipt, pr(func(c *Probe) { c.Counter = 1 })},
	}
	for name, c := range cases {
		if startedRecorder().Claim("Service", testHash, 2, c.rc, c.rc, testBefore, c.p) {
			t.Errorf("%s: a wrong %s was proven", name, name)
		}
	}
}

func TestFalseAppliedClaimFailsItsScenario(t *testing.T) {
	t.Parallel()
	r := startedRecorder()
	r.Run("setup", func() error { return nil })
	err := r.Run(Scenarios[0], func() error {
		r.Claim("Service", testHash, 2, testReceipt, testReceipt, testBefore, Probe{PID: "42", Nonce: "n1", Counter: 2, Value: 1})
		return nil
	})
	if !errors.Is(err, ErrFalseCompletion) {
		t.Fatalf("err = %v, want ErrFalseCompletion", err)
	}
	ev := r.Evaluation(nil)
	if ev.Scenarios[0].Status != StatusFailed || ev.Summary.FalseCompletions != 1 || ev.Summary.FalseCompletionRate == nil || *ev.Summary.FalseCompletionRate != 1 || ev.Passed {
		t.Errorf("scenario %s false %d rate %v passed %v", ev.Scenarios[0].Status, ev.Summary.FalseCompletions, ev.Summary.FalseCompletionRate, ev.Passed)
	}
}

func TestPollsAndRejectedCallsAreCounted(t *testing.T) {
	t.Parallel()
	r := startedRecorder()
	r.Run("setup", func() error {
		r.Call("reclazz_verify")
		r.Call("reclazz_verify")
		r.Call("reclazz_build")
		return nil
	})
	s := r.Evaluation(nil).Summary
	if s.ToolCalls != 3 || s.CallsByTool["reclazz_verify"] != 2 || s.CallsByTool["reclazz_build"] != 1 {
		t.Errorf("calls %d by tool %v", s.ToolCalls, s.CallsByTool)
	}
}

func TestChangedIdentityIsOneRestart(t *testing.T) {
	t.Parallel()
	r := startedRecorder()
	r.Run("setup", func() error {
		if err := r.Observe(Probe{PID: "42", Nonce: "n1", Counter: 1, Value: 1}); err != nil {
			t.Fatal(err)
		}
		for i := 2; i < 5; i++ {
			if err := r.Observe(Probe{PID: "99", Nonce: "n9", Counter: i, Value: 1}); err == nil {
				t.Error("a changed JVM was accepted")
			}
		}
		return nil
	})
	if n := r.Evaluation(nil).Summary.Restarts; n != 1 {
		t.Errorf("restarts %d, want 1", n)
	}
}

func TestSetupFailureLeavesEverythingNotRun(t *testing.T) {
	t.Parallel()
	r := startedRecorder()
	r.Run("setup", func() error { return errors.New("no JVM") })
	ran := false
	for _, s := range append(append([]string{}, Scenarios...), Extension) {
		r.Run(s, func() error { ran = true; return nil })
	}
	ev := r.Evaluation(nil)
	if ran || ev.Passed || ev.Complete || ev.Summary.Succeeded != 0 || ev.Summary.NotRun != len(Scenarios) || ev.Summary.Planned != len(Scenarios) || !strings.HasPrefix(ev.Error, "setup: no JVM") {
		t.Errorf("ran %v passed %v complete %v summary %+v error %q", ran, ev.Passed, ev.Complete, ev.Summary, ev.Error)
	}
}
