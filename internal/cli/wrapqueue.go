package cli

import (
	"context"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/buildguard/buildguard/buildguard"
	"github.com/buildguard/buildguard/internal/buildqueue"
)

// wrapHeartbeat is how often a waiting wrapper repeats where it stands
// when nothing changed.
const wrapHeartbeat = 30 * time.Second

// wrapFront is how the builds behind a wrapper see where it came from.
const wrapFront = "terminal"

// wrapAdmit is the wrapper's turn in the build queue of its project, whose
// root is found from the working directory as for every front
// (buildqueue.Root, docs/safe-build.md#4): it waits for the turn,
// saying on stderr where it stands, and releases the turn when the build
// has ended. The wrapper waits until its turn comes or a signal ends it.
// A cycle of a continuous build waits while the build may hold our
// terminal in raw mode (pty), so the lines go through the raw-safe writer.
func wrapAdmit(argv []string, stderr io.Writer, log hclog.Logger) func(context.Context) ([]string, func(), error) {
	stderr = buildguard.LogWriter(stderr)
	return func(ctx context.Context) ([]string, func(), error) {
		wd, err := os.Getwd()
		if err != nil {
			return nil, nil, fmt.Errorf("the working directory: %w", err)
		}
		waited := false
		q := buildqueue.New(buildqueue.Config{Logger: log.Named("queue")})
		t, err := q.Wait(ctx, buildqueue.Request{
			Project:   wd,
			Name:      commandName(argv),
			Front:     wrapFront,
			Heartbeat: wrapHeartbeat,
			Report: func(s buildqueue.Status) {
				waited = true
				fmt.Fprintf(stderr, "buildguard: %s\n", s)
			},
		})
		if err != nil {
			return nil, nil, err
		}
		if waited {
			fmt.Fprintf(stderr, "buildguard: the build's turn came after %s; starting it\n", t.Waited().Round(time.Second))
		}
		return t.Env(), func() { t.Release(nil) }, nil
	}
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
