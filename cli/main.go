package cli

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"

	"github.com/buildguard/buildguard/service/buildqueue"
)

const usage = `Usage:
  buildguard [--port N | --port-file PATH] [--owner TOKEN] [--timeout-ms N] [--grace DURATION] [--transcript FILE] -- COMMAND [ARG...]
  buildguard [wrapper options] --continuous -- GRADLE_COMMAND --continuous TASK...
  buildguard mcp [--project-dir PATH] [--port-file PATH]
  buildguard mcp --http ADDR [--token-file FILE] [--url-file FILE] [--project-dir PATH] [--port-file PATH]
  buildguard status | doctor | scan | pending                      [endpoint flags]
  buildguard diagnose CLASS                                        [endpoint flags]
  buildguard verify CLASS (SHA256 | --class-file FILE)             [endpoint flags]
  buildguard verify-batch (CLASS=SHA256 | CLASS=@FILE)...          [endpoint flags]
  buildguard reload pause | resume | status                        [endpoint flags]
  buildguard build started | ok | failed --owner TOKEN             [endpoint flags]
  buildguard build run [NAME]                                      [endpoint flags]
  buildguard init --mcp [--project-dir DIR]
  buildguard init [--host NAME]... [--all] [--skill] [--check] [--dry-run] [--absolute] [--project-dir DIR]
  buildguard version | --version

Endpoint flags: --project-dir PATH, --port-file PATH, --port N, --hybris-home PATH, --timeout-ms N
`

// Main runs buildguard with args (without the program name) and returns the
// exit code.
func Main(args []string) ExitCode {
	return run(args, os.Stdout, os.Stderr)
}

func run(args []string, stdout, stderr io.Writer) ExitCode {
	if len(args) == 0 {
		fmt.Fprint(stderr, usage)
		return ExitUsage
	}
	if len(args) == 2 && args[0] == buildqueue.WatchdogArg {
		// The watchdog a supervisor started (buildqueue.EnableWatchdog).
		return ExitCode(buildqueue.WatchdogMain(os.Stdin))
	}
	if isWrapForm(args) {
		return runWrap(args, stdout, stderr)
	}
	switch args[0] {
	case "--help", "-h", "help":
		fmt.Fprint(stderr, usage)
		return ExitOK
	case "mcp":
		return runMCP(args[1:], os.Stdin, stdout, stderr)
	case "version", "--version":
		return runVersion(args[1:], stdout, stderr)
	}
	if t, n := toolCommand(args); t != nil {
		return runTool(t, args[n:], stdout, stderr)
	}
	if args[0] == "init" {
		return runInit(args[1:], stdout, stderr)
	}
	fmt.Fprintf(stderr, "buildguard: unknown command %q\n%s", args[0], usage)
	return ExitUsage
}

// runVersion prints the binary's version (docs/decisions.md#D3). It takes
// no arguments: only --help, read by the grammar of docs/decisions.md#D1.
func runVersion(args []string, stdout, stderr io.Writer) ExitCode {
	const versionUsage = "Usage: buildguard version\n"
	none := func(string) error { return errors.New("version takes no arguments") }
	_, _, err := newFlagSet(noOperands, flagMessages{unknown: none}).parse(args)
	switch {
	case errors.Is(err, flag.ErrHelp):
		fmt.Fprint(stderr, versionUsage)
		return ExitOK
	case err != nil:
		fmt.Fprintf(stderr, "buildguard: %v\n%s", err, versionUsage)
		return ExitUsage
	}
	fmt.Fprintln(stdout, version())
	return ExitOK
}
