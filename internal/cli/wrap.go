package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/buildguard/buildguard/agentproto"
	"github.com/buildguard/buildguard/buildguard"
	"github.com/hashicorp/go-hclog"
)

const wrapUsage = "Usage: buildguard [--port N | --port-file PATH] [--owner TOKEN] [--timeout-ms N] [--grace DURATION] [--transcript FILE] -- COMMAND [ARG...]\n"

// isWrapForm reports whether args are the wrapper form of docs/decisions.md#D1: the first
// argument is an option other than --help, or the `--` separator.
func isWrapForm(args []string) bool {
	return len(args) > 0 && strings.HasPrefix(args[0], "--") && args[0] != "--help"
}

// wrapOptions are the parsed options of the wrapper form.
type wrapOptions struct {
	port, portFile, owner, timeoutMs, transcript string
	portSet, portFileSet, ownerSet, timeoutSet   bool
	grace                                        time.Duration
	argv                                         []string
}

// errUsage marks a usage error: the usage line follows, exit 2.
var errUsage = errors.New("usage error")

// parseWrap parses options until the first `--`; every option takes the next
// token as its value, whatever it is (or the text after "=" in --opt=value),
// and a repeated option overrides the earlier one (docs/mcp-server.md#6). It
// returns help=true for --help.
func parseWrap(args []string) (o wrapOptions, help bool, err error) {
	for i := 0; i < len(args); i++ {
		opt, v, inline := strings.Cut(args[i], "=")
		if !inline {
			opt = args[i]
		} else if opt == "--" || opt == "--help" || opt == "-h" {
			return o, false, fmt.Errorf("%w: unknown option %q", errUsage, args[i])
		}
		switch opt {
		case "--":
			o.argv = args[i+1:]
			if len(o.argv) == 0 {
				return o, false, fmt.Errorf("%w: no command after --", errUsage)
			}
			return o, false, nil
		case "--help", "-h":
			return o, true, nil
		case "--port", "--port-file", "--owner", "--timeout-ms", "--grace", "--transcript":
		default:
			return o, false, fmt.Errorf("%w: unknown option %q", errUsage, args[i])
		}
		if !inline {
			if i+1 >= len(args) {
				return o, false, fmt.Errorf("%w: %s needs a value", errUsage, opt)
			}
			i++
			v = args[i]
		}
		switch opt {
		case "--port":
			o.port, o.portSet = v, true
		case "--port-file":
			o.portFile, o.portFileSet = v, true
		case "--owner":
			o.owner, o.ownerSet = v, true
		case "--timeout-ms":
			o.timeoutMs, o.timeoutSet = v, true
		case "--grace":
			d, err := time.ParseDuration(v)
			if err != nil || d < 0 {
				return o, false, fmt.Errorf("%w: --grace needs a duration such as 10s or 500ms", errUsage)
			}
			if d == 0 {
				d = -1 // no grace: kill at once
			}
			o.grace = d
		case "--transcript":
			o.transcript = v
		}
	}
	return o, false, fmt.Errorf("%w: missing -- before the command", errUsage)
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
// stdout is the child's; the wrapper itself writes only to stderr.
func runWrap(args []string, stdout, stderr io.Writer) ExitCode {
	o, help, err := parseWrap(args)
	if help {
		fmt.Fprint(stderr, wrapUsage)
		return ExitOK
	}
	if err != nil {
		return wrapExit(0, err, stderr)
	}
	// A fresh UUID only when --owner is absent: a given owner is checked,
	// also when it is empty (a script passing an unset variable).
	owner, err := buildguard.NewOwner(o.owner)
	if o.ownerSet {
		err = buildguard.CheckOwner(o.owner)
	}
	if err != nil {
		return wrapExit(0, fmt.Errorf("%w: %w", errUsage, err), stderr)
	}

	cfg := buildguard.Config{
		Owner:  owner,
		Grace:  o.grace,
		Stdout: stdout,
		Stderr: stderr,
		Logger: wrapLogger(stderr),
		// The process exits right after the build.
		KeepSignals: true,
	}
	// Problems found before connecting refuse the build after the owner line.
	var refused error
	switch {
	case o.portSet && agentproto.IsBlank(o.port):
		refused = fmt.Errorf("%w: %w: %s", buildguard.ErrRefused, agentproto.ErrInvalidPort, o.port)
	case o.portSet:
		cfg.Endpoint.Port = o.port
	case o.portFileSet && o.portFile == "":
		cfg.Endpoint.PortFile = "." // the working directory: not a port file
	case o.portFileSet:
		cfg.Endpoint.PortFile = o.portFile
	}
	if o.timeoutSet && refused == nil {
		ms, ok := agentproto.ParseJavaInt(o.timeoutMs)
		switch {
		case !ok:
			refused = fmt.Errorf("%w: Invalid timeoutMs", buildguard.ErrRefused)
		case ms < 1 || ms > 60000:
			refused = fmt.Errorf("%w: timeoutMs must be between 1 and 60000", buildguard.ErrRefused)
		default:
			cfg.Timeout = time.Duration(ms) * time.Millisecond
		}
	}
	if o.transcript != "" && refused == nil {
		f, err := os.OpenFile(o.transcript, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o644)
		if err != nil {
			refused = fmt.Errorf("%w: cannot create the transcript: %w", buildguard.ErrRefused, err)
		} else {
			defer f.Close()
			cfg.Transcript = f
		}
	}
	if refused != nil {
		fmt.Fprintln(stderr, buildguard.OwnerLine(owner))
		return wrapExit(0, refused, stderr)
	}
	g, err := buildguard.New(cfg)
	if err != nil {
		return wrapExit(0, err, stderr)
	}
	code, err := g.Run(context.Background(), o.argv)
	return wrapExit(code, err, stderr)
}

// wrapExit maps the outcome of a guarded build to the exit code and the
// stderr line of docs/decisions.md#D8. It is the only place that does.
func wrapExit(code int, err error, stderr io.Writer) ExitCode {
	var ie *buildguard.InterruptedError
	switch {
	case err == nil:
		return ExitCode(code)
	case errors.Is(err, errUsage):
		// The usage line comes first: scripts check that stderr starts with "Usage:".
		fmt.Fprintf(stderr, "%sbuildguard: %s\n", wrapUsage, strings.TrimPrefix(err.Error(), errUsage.Error()+": "))
		return ExitUsage
	case errors.As(err, &ie):
		switch {
		case ie.Err != nil:
			fmt.Fprintf(stderr, "buildguard: %v\n", ie.Err)
		case !ie.Ran:
			fmt.Fprintf(stderr, "buildguard: build interrupted (%v) before the command started; it did not run\n", ie.Signal)
		default:
			fmt.Fprintf(stderr, "buildguard: build interrupted (%v); BUILD failed was acknowledged, the output stays held for this owner\n", ie.Signal)
		}
		return ExitCode(ie.ExitCode())
	case errors.Is(err, buildguard.ErrCannotRun):
		fmt.Fprintf(stderr, "buildguard: %v; BUILD failed was acknowledged\n", err)
		return ExitCannotRun
	case errors.Is(err, buildguard.ErrRefused), errors.Is(err, buildguard.ErrUnsafe):
		fmt.Fprintf(stderr, "buildguard: %v\n", err)
		return ExitFailure
	}
	fmt.Fprintf(stderr, "buildguard: %v\n", err)
	return ExitFailure
}
