package buildguard

import (
	"context"
	"errors"
	"fmt"
	"syscall"
	"testing"

	"github.com/buildguard/buildguard/agentproto"
)

// toolArguments are the MCP tools' argument names, which the core never
// words (docs/decisions.md#D2).
var toolArguments = []string{"portFile", "projectDir", "timeoutMs", "hybrisHome", "port/"}

// TestAdviceWordsWhatTheErrorIsMadeOf: a front's advice follows each error
// it has words for wherever that error sits in what Run returns — a
// refusal's problem and fix, an unconfirmed or abandoned finish inside an
// interruption or a continuous run's end — and without advice every text
// is the error's own (docs/decisions.md#D2).
func TestAdviceWordsWhatTheErrorIsMadeOf(t *testing.T) {
	t.Parallel()
	a := Advice{FixRerun: "RERUN", FixRelease: "RELEASE", FixFindAgent: "FIND", FixConfirmProject: "CONFIRM", FixDiscovery: "DISCOVER", FixStartAgent: "START"}
	lost := &UnconfirmedError{State: agentproto.BuildFailed, Err: agentproto.ErrTimeout}
	ab := &AbandonedError{Signal: syscall.SIGTERM, State: agentproto.BuildOK, Sent: true}
	for _, c := range []struct {
		name string
		err  error
		want string
	}{
		{"refusal without a port file", &RefusalError{Problem: agentproto.ErrNoPortFile, Fix: FixDiscovery},
			"build refused: no port file found; FIND; DISCOVER"},
		{"refusal in a project not confirmed", &RefusalError{Stage: "Cannot open build session", Problem: fmt.Errorf("gate: %w", agentproto.ErrProjectNotConfirmed), Fix: FixStartAgent, After: "AFTER"},
			"build refused: Cannot open build session: gate: Selected project could not be confirmed; no requested command sent. CONFIRM; START; AFTER"},
		{"unconfirmed", lost, lost.Error() + ": RERUN"},
		{"abandoned", &InterruptedError{Signal: syscall.SIGINT, Ran: true, Err: ab}, "the build was interrupted by interrupt: " + ab.Error() + ": RELEASE"},
		{"cancelled continuous run", &InterruptedError{Ran: true, Err: join("\n", context.Canceled, join(": ", ErrUnsafe, join("; ", errors.New("the agent connection was lost"), lost)))},
			"the build was cancelled: context canceled\nbuild did not complete safely: the agent connection was lost; " + lost.Error() + ": RERUN"},
		{"interrupted, nothing owed", &InterruptedError{Signal: syscall.SIGINT}, "the build was interrupted by interrupt"},
		{"anything else", errors.New("other"), "other"},
	} {
		if got := a.Word(c.err); got != c.want {
			t.Errorf("%s: Word = %q, want %q", c.name, got, c.want)
		}
		if got := Advice(nil).Word(c.err); got != c.err.Error() {
			t.Errorf("%s: without advice Word = %q, want the error's text %q", c.name, got, c.err.Error())
		}
	}
}

// TestJoinIsErrorsJoinWithASeparator: the core's joined errors keep the
// text and the chain errors.Join gives them, with their own separator.
func TestJoinIsErrorsJoinWithASeparator(t *testing.T) {
	t.Parallel()
	x, y := errors.New("x"), errors.New("y")
	if join("; ", nil, nil) != nil {
		t.Error("join of nothing is not nil")
	}
	err := join("\n", x, nil, y)
	if want := errors.Join(x, y); err.Error() != want.Error() || !errors.Is(err, x) || !errors.Is(err, y) {
		t.Errorf("join = %q, want %q wrapping both", err, want)
	}
	if err := join(": ", ErrUnsafe, x); err.Error() != fmt.Errorf("%w: %w", ErrUnsafe, x).Error() || !errors.Is(err, ErrUnsafe) {
		t.Errorf("join = %q", err)
	}
}
