package cli

import (
	"context"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/buildguard/buildguard/buildguard"
	"github.com/buildguard/buildguard/service/buildqueue"
)

// wrapHeartbeat is how often a waiting wrapper repeats where it stands
// when nothing changed.
const wrapHeartbeat = 30 * time.Second

// wrapFront is how the builds behind a wrapper see where it came from.
const wrapFront = "terminal"

// wrapTurn is the wrapper's turn in the build queue of its project, whose
// root is found from the working directory as for every front
// (buildqueue.Root, docs/safe-build.md#4): admit waits for the turn,
// saying on stderr where it stands (also while processes of an earlier
// build that outlived its supervisor are waited for and ended, after the
// wrapper's grace period), and its release ends the turn when the build
// has ended; started records the command's processes in the turn
// (docs/decisions.md#D22). The wrapper waits until its turn comes or a
// signal ends it. A cycle of a continuous build waits while the build may
// hold our terminal in raw mode (pty), so the lines go through the
// raw-safe writer.
type wrapTurn struct {
	argv   []string
	stderr io.Writer
	log    hclog.Logger
	grace  time.Duration

	mu   sync.Mutex
	turn *buildqueue.Turn // the turn held now, nil between turns
}

func newWrapTurn(argv []string, stderr io.Writer, log hclog.Logger, grace time.Duration) *wrapTurn {
	return &wrapTurn{argv: argv, stderr: buildguard.LogWriter(stderr), log: log, grace: grace}
}

// admit is the guard's Config.Admit.
func (w *wrapTurn) admit(ctx context.Context) ([]string, func(), error) {
	wd, err := os.Getwd()
	if err != nil {
		return nil, nil, fmt.Errorf("the working directory: %w", err)
	}
	waited := false
	q := buildqueue.New(buildqueue.Config{Logger: w.log.Named("queue")})
	t, err := q.Wait(ctx, buildqueue.Request{
		Project:   wd,
		Name:      commandName(w.argv),
		Front:     wrapFront,
		Heartbeat: wrapHeartbeat,
		Grace:     w.grace,
		Report: func(s buildqueue.Status) {
			waited = true
			// A build told it waits hears the interrupt that follows.
			<-buildguard.SignalsCaught(ctx)
			fmt.Fprintf(w.stderr, "buildguard: %s\n", s)
		},
	})
	if err != nil {
		return nil, nil, err
	}
	if note := t.OutlivedNote(); note != "" {
		fmt.Fprintf(w.stderr, "buildguard: before this build started, %s\n", note)
	}
	if waited {
		fmt.Fprintf(w.stderr, "buildguard: the build's turn came after %s; starting it\n", t.Waited().Round(time.Second))
	}
	w.mu.Lock()
	w.turn = t
	w.mu.Unlock()
	return t.Env(), func() {
		w.mu.Lock()
		if w.turn == t {
			w.turn = nil
		}
		w.mu.Unlock()
		t.Release(nil)
	}, nil
}

// started is the guard's Config.Started: it records the command's
// processes in the turn held now.
func (w *wrapTurn) started(pid int, session bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.turn.Started(pid, session)
}

// commandName is the wrapped command as the builds behind it see it: the
// command line, cut to 80 characters.
func commandName(argv []string) string {
	s := strings.Join(argv, " ")
	if r := []rune(s); len(r) > 80 {
		return string(r[:79]) + "…"
	}
	return s
}
