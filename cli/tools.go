package cli

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"slices"
	"strings"
	"sync/atomic"
	"syscall"

	"github.com/buildguard/buildguard/service/buildqueue"
	"github.com/buildguard/buildguard/service/tools"
)

// endpointFlags map the endpoint flags to the tools' argument names.
var endpointFlags = map[string]string{
	"--project-dir": "projectDir", "--port-file": "portFile", "--port": "port",
	"--hybris-home": "hybrisHome", "--timeout-ms": "timeoutMs",
}

const endpointUsage = "[--project-dir PATH] [--port-file PATH] [--port N] [--hybris-home PATH] [--timeout-ms N]"

// toolCommand returns the tool whose subcommand args start with
// (docs/decisions.md#D2), and how many words the subcommand has, or nil. A
// two-word subcommand (`build run`) wins over the one-word subcommand it
// starts with (`build`).
func toolCommand(args []string) (*tools.Tool, int) {
	var found *tools.Tool
	n := 0
	for _, t := range tools.All() {
		words := strings.Fields(t.CLI.Command)
		if len(words) > n && len(words) <= len(args) && slices.Equal(words, args[:len(words)]) {
			found, n = t, len(words)
		}
	}
	return found, n
}

// toolUsage is the usage line of a tool subcommand.
func toolUsage(t *tools.Tool) string {
	parts := []string{"buildguard", t.CLI.Command}
	if t.CLI.Usage != "" {
		parts = append(parts, t.CLI.Usage)
	}
	return strings.Join(append(parts, endpointUsage), " ")
}

// toolMessages words the parse errors of a tool subcommand.
var toolMessages = flagMessages{
	unknown: func(tok string) error {
		name, _, _ := strings.Cut(tok, "=")
		return fmt.Errorf("unknown flag %s", name)
	},
	missing: func(flag string) error { return fmt.Errorf("flag %s needs a value", flag) },
	twice:   func(flag string) error { return fmt.Errorf("flag %s given twice", flag) },
}

// parseToolArgs splits args into positionals, the endpoint flags (by the
// tools' argument names) and the subcommand's own flags (by form.Flags'
// names) by the grammar of docs/decisions.md#D1: flags may stand before or
// after the positionals, each at most once. --help is flag.ErrHelp.
func parseToolArgs(form tools.CLIForm, args []string) (pos []string, toolArgs map[string]string, own map[string]string, err error) {
	toolArgs, own = map[string]string{}, map[string]string{}
	s := newFlagSet(operandsAnywhere, toolMessages)
	for _, flags := range []struct {
		names map[string]string
		dst   map[string]string
	}{{endpointFlags, toolArgs}, {form.Flags, own}} {
		for flag, key := range flags.names {
			s.value(flag, false, func(v string) error { flags.dst[key] = v; return nil })
		}
	}
	if pos, _, err = s.parse(args); err != nil {
		return nil, nil, nil, err
	}
	return pos, toolArgs, own, nil
}

// flagWords words an argument error in the subcommand's flags: the
// argument it names is the flag that gives it (timeoutMs is --timeout-ms),
// followed by the error's rule.
func flagWords(form tools.CLIForm, e *tools.ArgError) string {
	if e.Arg == "" {
		return e.Message
	}
	for flag, arg := range endpointFlags {
		if arg == e.Arg {
			return flag + " " + e.Rule
		}
	}
	for flag, arg := range form.Flags {
		if arg == e.Arg {
			return flag + " " + e.Rule
		}
	}
	return e.Message
}

// runTool runs the subcommand of tool t: it prints the tool's JSON object on
// one line and exits 0 when the result is not an error, 1 when it is, and 2
// when the arguments are invalid (the cases MCP answers with -32602).
func runTool(t *tools.Tool, args []string, stdout, stderr io.Writer) ExitCode {
	name, usage := t.CLI.Command, toolUsage(t)
	usageErr := func(err error) ExitCode {
		fmt.Fprintf(stderr, "buildguard %s: %v\nUsage: %s\n", name, err, usage)
		return ExitUsage
	}
	pos, endpoint, own, err := parseToolArgs(t.CLI, args)
	switch {
	case errors.Is(err, flag.ErrHelp):
		fmt.Fprintf(stderr, "Usage: %s\n", usage)
		return ExitOK
	case err != nil:
		return usageErr(err)
	}
	specific, err := t.CLI.Args(pos, own)
	if err != nil {
		return usageErr(err)
	}
	raw := map[string]json.RawMessage{}
	for k, v := range endpoint {
		raw[k], _ = json.Marshal(v)
	}
	for k, v := range specific {
		if raw[k], err = json.Marshal(v); err != nil {
			return usageErr(err)
		}
	}
	ctx := context.Background()
	var screen *buildScreen
	quit := func() bool { return false }
	if t.Name == tools.ToolSafeBuild {
		// A signal cancels the build: its process group is stopped and BUILD
		// failed confirmed before the result is printed (docs/safe-build.md#6).
		var stop context.CancelFunc
		ctx, quit, stop = cancelOnSignal(ctx)
		defer stop()
		// The build's processes end with this process, however it ends
		// (docs/safe-build.md#4).
		defer buildqueue.EnableWatchdog(wrapLogger(stderr).Named("watchdog")).Stop()
		build := ""
		if len(pos) > 0 {
			build = pos[0]
		}
		screen = newBuildScreen(stderr, build)
		defer screen.close()
		ctx = tools.WithProgress(ctx, screen.progress)
		ctx = tools.WithQueueProgress(ctx, screen.queue)
	}
	advice := toolAdvice
	if t.Name == tools.ToolSafeBuild {
		advice = buildRunAdvice
	}
	res, err := tools.NewService(tools.Deps{Advice: advice}).Call(ctx, t.Name, raw)
	var argErr *tools.ArgError
	switch {
	case errors.As(err, &argErr):
		return usageErr(errors.New(flagWords(t.CLI, argErr)))
	case err != nil:
		fmt.Fprintf(stderr, "buildguard %s: internal error: %v\n", name, err)
		return ExitFailure
	}
	if screen != nil {
		screen.close()
		screen.result(res.Data)
	}
	stdout.Write(append(res.Data, '\n'))
	if quit() {
		// SIGQUIT ends it as it ends the wrapper (docs/decisions.md#D12).
		return signalExit(syscall.SIGQUIT)
	}
	if res.IsError {
		return ExitFailure
	}
	return ExitOK
}

// cancelOnSignal returns a context that a stop signal (stopSignals)
// cancels, and whether that signal was SIGQUIT; stop releases the signals.
func cancelOnSignal(parent context.Context) (ctx context.Context, quit func() bool, stop context.CancelFunc) {
	ctx, cancel := context.WithCancel(parent)
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, stopSignals()...)
	var gotQuit atomic.Bool
	go func() {
		select {
		case s := <-sigs:
			gotQuit.Store(s == syscall.SIGQUIT)
			cancel()
		case <-ctx.Done():
		}
	}()
	return ctx, gotQuit.Load, func() { signal.Stop(sigs); cancel() }
}
