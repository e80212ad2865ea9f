package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"

	"github.com/buildguard/buildguard/buildguard"
	"github.com/hashicorp/go-hclog"
)

const wrapUsage = "Usage: buildguard [--port N | --port-file PATH] [--owner TOKEN] [--timeout-ms N] [--grace DURATION] [--transcript FILE] [--continuous] -- COMMAND [ARG...]\n"

// isWrapForm reports whether args are the wrapper form of docs/decisions.md#D1: the first
// argument is an option (`--name` or `-name`) other than --help, -h and
// --version, or the `--` separator.
func isWrapForm(args []string) bool {
	if len(args) == 0 || len(args[0]) < 2 || args[0][0] != '-' {
		return false
	}
	switch args[0] {
	case "--help", "-h", "--version":
		return false
	}
	return true
}

// usageError is a command line that is not the wrapper form; its text says
// what is wrong and what to type instead. The usage line precedes it, exit 2.
type usageError string

func (e usageError) Error() string { return string(e) }

// wrapMessages words the wrapper's parse errors (docs/mcp-server.md#6).
var wrapMessages = flagMessages{
	unknown: func(tok string) error {
		return usageError(fmt.Sprintf("unknown option %q: options come before --, and everything after -- is the command", tok))
	},
	missing: func(flag string) error { return usageError(fmt.Sprintf("%s needs a value: %s VALUE", flag, flag)) },
	valued: func(string) error {
		return usageError("--continuous takes no value: buildguard --continuous -- ./gradlew --continuous classes")
	},
}

// parseWrap translates the options before the first `--` into
// buildguard.Options by the grammar of docs/decisions.md#D1; a repeated
// option overrides the earlier one (docs/mcp-server.md#6). The values are
// checked by the core. It returns help=true for --help.
func parseWrap(args []string) (o buildguard.Options, argv []string, help bool, err error) {
	s := newFlagSet(commandAfterDashes, wrapMessages)
	for flag, dst := range map[string]**string{
		"--port": &o.Port, "--port-file": &o.PortFile, "--owner": &o.Owner,
		"--timeout-ms": &o.TimeoutMs, "--grace": &o.Grace, "--transcript": &o.Transcript,
	} {
		s.value(flag, true, func(v string) error { *dst = &v; return nil })
	}
	s.onOff("--continuous", true, func() { o.Continuous = true })
	argv, ended, err := s.parse(args)
	switch {
	case errors.Is(err, flag.ErrHelp):
		return o, nil, true, nil
	case err != nil:
		return o, nil, false, err
	case !ended:
		return o, nil, false, usageError("missing -- before the command: buildguard [options] -- COMMAND [ARG...]")
	case len(argv) == 0:
		return o, nil, false, usageError("no command after --: name the build command, as in buildguard -- ./gradlew classes")
	}
	return o, argv, false, nil
}

// wrapLogger is the wrapper's go-hclog logger on stderr (docs/decisions.md#D9).
func wrapLogger(stderr io.Writer) hclog.Logger {
	level := hclog.LevelFromString(os.Getenv("BUILDGUARD_LOG_LEVEL"))
	if level == hclog.NoLevel {
		level = hclog.Warn
	}
	return hclog.New(&hclog.LoggerOptions{
		Name:       "buildguard",
		Level:      level,
		JSONFormat: os.Getenv("BUILDGUARD_LOG_FORMAT") == "json",
		Output:     buildguard.LogWriter(stderr), // lines stay aligned while a pty build runs
		Color:      hclog.ColorOff,
	})
}

// runWrap runs the wrapper form: one guarded build of the command after `--`.
// stdout is the child's; the wrapper itself writes only to stderr. The core
// checks the options and owns every refusal; this only translates and prints.
func runWrap(args []string, stdout, stderr io.Writer) ExitCode {
	o, argv, help, err := parseWrap(args)
	if help {
		fmt.Fprint(stderr, wrapUsage)
		return ExitOK
	}
	if err != nil {
		return wrapExit(0, err, stderr)
	}
	cfg, err := o.Config()
	if err != nil {
		return wrapExit(0, err, stderr)
	}
	cfg.Stdout, cfg.Stderr = stdout, stderr
	cfg.Logger = wrapLogger(stderr)
	cfg.OwnerLine = ownerLine
	cfg.WaitLine = waitLine
	cfg.KeepSignals = true // the process exits right after the build
	turn := newWrapTurn(argv, stderr, cfg.Logger, cfg.Grace)
	cfg.Admit, cfg.Started = turn.admit, turn.started
	g, err := buildguard.New(cfg)
	if err != nil {
		return wrapExit(0, err, stderr)
	}
	if o.Continuous {
		return runContinuous(g, argv, stderr)
	}
	code, err := g.Run(context.Background(), argv)
	return wrapExit(code, err, stderr)
}

// wrapExit maps the outcome of a guarded build to the exit code and the
// stderr line of docs/decisions.md#D8. It is the only place that does.
func wrapExit(code int, err error, stderr io.Writer) ExitCode {
	var ie *buildguard.InterruptedError
	var ue usageError
	switch {
	case err == nil:
		return ExitCode(code)
	case errors.As(err, &ue), errors.Is(err, buildguard.ErrInvalidOwner), errors.Is(err, buildguard.ErrInvalidOption):
		// The usage line comes first: scripts check that stderr starts with "Usage:".
		fmt.Fprintf(stderr, "%sbuildguard: %s\n", wrapUsage, wrapText(err))
		return ExitUsage
	case errors.As(err, &ie):
		switch {
		case ie.Err != nil:
			fmt.Fprintf(stderr, "buildguard: %s\n", wrapText(ie.Err))
		case !ie.Ran:
			fmt.Fprintf(stderr, "buildguard: build interrupted (%v) before the command started; it did not run\n", ie.Signal)
		default:
			fmt.Fprintf(stderr, "buildguard: build interrupted (%v); BUILD failed was acknowledged, the output stays held for this owner: rerun the build with --owner and the owner printed above to release it\n", ie.Signal)
		}
		return ExitCode(ie.ExitCode())
	case errors.Is(err, buildguard.ErrCannotRun):
		fmt.Fprintf(stderr, "buildguard: %v; BUILD failed was acknowledged: check the command's name and PATH, then rerun with --owner and the owner printed above\n", err)
		return ExitCannotRun
	}
	fmt.Fprintf(stderr, "buildguard: %s\n", wrapText(err))
	return ExitFailure
}
