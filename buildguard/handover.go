package buildguard

import (
	"context"
	"errors"
	"time"

	"github.com/buildguard/buildguard/agentproto"
)

// handoverWait bounds how long a rejected `BUILD started` is asked again.
// The agent releases a hold only after it has acknowledged `BUILD ok`, on
// its reload thread, once it has captured the held class files
// (docs/agent-protocol.md#5): until then it rejects every other owner's
// `started`. The build whose turn in the project's queue has just come
// (docs/decisions.md#D18) asks at exactly that moment, so a rejection is
// first taken for a hand-over in progress; one that lasts longer than
// handoverWait is a hold someone keeps: its last rejection refuses the
// build.
const handoverWait = 3 * time.Second

// handoverPause is the first pause before `BUILD started` is asked again;
// each later one doubles, up to handoverMaxPause.
const (
	handoverPause    = 5 * time.Millisecond
	handoverMaxPause = 500 * time.Millisecond
)

// startHold asks for the hold with ask (`BUILD started`) and asks again
// after a BUILD_REJECTED, with growing pauses, until handoverWait has
// passed since the first ask or ctx ends; it then returns the last
// rejection. A rejected `started` took no hold, so asking again owes the
// agent nothing. Every other answer is returned at once.
func (g *Guard) startHold(ctx context.Context, ask func() error) error {
	deadline := time.Now().Add(handoverWait)
	pause := handoverPause
	for {
		err := ask()
		if !errors.Is(err, agentproto.ErrRejected) || time.Now().Add(pause).After(deadline) {
			return err
		}
		g.log.Debug("BUILD started was rejected; asking again, in case the hold before is still being released", "pause", pause)
		t := time.NewTimer(pause)
		select {
		case <-t.C:
		case <-ctx.Done():
			t.Stop()
			return err
		}
		pause = min(2*pause, handoverMaxPause)
	}
}
