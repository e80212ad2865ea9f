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
