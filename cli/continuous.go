package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/buildguard/buildguard/buildguard"
)

// runContinuous runs the wrapper form with --continuous: a continuous Gradle
// build guarded cycle by cycle (docs/decisions.md#D20). Each finished cycle
// is one stderr line; the run's end is one more.
func runContinuous(g *buildguard.Guard, argv []string, stderr io.Writer) ExitCode {
	// A cycle ends while the build may hold our terminal in raw mode (pty).
	lines := buildguard.LogWriter(stderr)
	run, code, err := g.RunContinuous(context.Background(), argv, func(r buildguard.CycleReport) {
		fmt.Fprintln(lines, cycleLine(r))
	})
	return continuousExit(run, code, err, stderr)
}

// cycleLine is the stderr line of one finished cycle: its number, result,
// duration and whether its output was released.
func cycleLine(r buildguard.CycleReport) string {
	d := r.Duration.Round(time.Millisecond)
	switch {
	case r.Outcome == buildguard.CycleRefused:
		return fmt.Sprintf("buildguard: cycle %d refused after %v; no task of it ran, nothing released: %s", r.N, d, wrapAdvice.Word(r.Err))
	case r.Err != nil:
		return fmt.Sprintf("buildguard: cycle %d %v in %v; output held: %v", r.N, r.Outcome, d, r.Err)
	case r.Outcome == buildguard.CycleStopped:
		return fmt.Sprintf("buildguard: cycle %d stopped after %v by the end of the run; BUILD failed acknowledged, output held", r.N, d)
	case r.Released:
		return fmt.Sprintf("buildguard: cycle %d ok in %v; output released", r.N, d)
	}
	return fmt.Sprintf("buildguard: cycle %d %v in %v; output held until a cycle succeeds", r.N, r.Outcome, d)
}

// continuousExit maps the end of a continuous run to its exit code and
// final stderr line, as wrapExit does for one build (docs/decisions.md#D8).
func continuousExit(run buildguard.ContinuousRun, code int, err error, stderr io.Writer) ExitCode {
	held := "no output is held"
	if run.Held {
		held = "the output stays held for this owner: run a build with --owner and the owner printed above to release it"
	}
	var ie *buildguard.InterruptedError
	switch {
	case err == nil:
		fmt.Fprintf(stderr, "buildguard: continuous build ended (exit %d) after %s; %s\n", code, cyclesText(run.Cycles), held)
		return ExitCode(code)
	case errors.As(err, &ie) && ie.Ran:
		if ie.Err != nil {
			fmt.Fprintf(stderr, "buildguard: %s\n", wrapText(ie.Err))
		} else {
			what := "cancelled"
			if ie.Signal != nil {
				what = fmt.Sprintf("interrupted (%v)", ie.Signal)
			}
			fmt.Fprintf(stderr, "buildguard: continuous build %s after %s; %s\n", what, cyclesText(run.Cycles), held)
		}
		return ExitCode(ie.ExitCode())
	case errors.Is(err, buildguard.ErrCannotRun):
		fmt.Fprintf(stderr, "buildguard: %v; no hold was taken: check the command's name and PATH\n", err)
		return ExitCannotRun
	case errors.Is(err, buildguard.ErrUnsafe):
		fmt.Fprintf(stderr, "buildguard: %s; after %s, %s\n", wrapText(err), cyclesText(run.Cycles), held)
		return ExitFailure
	}
	return wrapExit(code, err, stderr)
}

// cyclesText is "1 cycle" or "N cycles".
func cyclesText(n int) string {
	if n == 1 {
		return "1 cycle"
	}
	return fmt.Sprintf("%d cycles", n)
}
