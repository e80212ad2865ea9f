//go:build unix

package acceptance

import (
	"errors"
	"testing"
)

func TestScenarioErrorNamesScenarioCheckAndLog(t *testing.T) {
	t.Parallel()
	r := &laneRun{p: project{lane: LaneMaven, root: "/w/maven project with spaces"}, number: 2, log: "/w/maven project with spaces/03-partial-failure.log"}
	err := r.fail(ErrAppExited, "the log must contain missingSymbol")
	want := "FAIL maven: scenario 2 partial-failure: the log must contain missingSymbol: " + ErrAppExited.Error() +
		"; see /w/maven project with spaces/03-partial-failure.log"
	if err.Error() != want {
		t.Errorf("error =\n%s\nwant\n%s", err, want)
	}
	if !errors.Is(err, ErrScenario) || !errors.Is(err, ErrAppExited) {
		t.Errorf("error does not match ErrScenario and its cause")
	}
	var se *ScenarioError
	if !errors.As(err, &se) || se.Scenario != "partial-failure" || se.Number != 2 {
		t.Errorf("ScenarioError = %+v", se)
	}
}

func TestParseCycles(t *testing.T) {
	t.Parallel()
	log := "> Task :a:compileJava\n" +
		"buildguard: cycle 1 ok in 1.2s; output released\n" +
		"Waiting for changes to input files of tasks... (ctrl-d to exit)\n" +
		"buildguard: cycle 2 failed in 0.8s; output held until a cycle succeeds\n" +
		"buildguard: cycle 3 stopped after 2.1s by the end of the run; BUILD failed acknowledged, output held\n" +
		"buildguard: cycle x ok in 1s; output released\n"
	got := parseCycles([]byte(log))
	want := []ContinuousCycle{{1, "ok", true, ""}, {2, "failed", false, ""}, {3, "stopped", false, ""}}
	if len(got) != len(want) {
		t.Fatalf("cycles %+v", got)
	}
	for i := range want {
		if got[i].Number != want[i].Number || got[i].Outcome != want[i].Outcome || got[i].Released != want[i].Released || got[i].Line == "" {
			t.Errorf("cycle %d: %+v, want %+v", i, got[i], want[i])
		}
	}
}
