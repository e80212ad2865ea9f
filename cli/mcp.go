package cli

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"syscall"

	"github.com/buildguard/buildguard/internal/boundedfile"
	"github.com/buildguard/buildguard/mcp"
	"github.com/buildguard/buildguard/service/buildqueue"
)

// mcpUsage is the usage line of `buildguard mcp` (docs/mcp-server.md#1.1);
// the second line is the HTTP form (docs/decisions.md#D14).
const mcpUsage = "Usage: buildguard mcp [--project-dir PATH] [--port-file PATH]\n" +
	"       buildguard mcp --http ADDR [--token-file FILE] [--url-file FILE] [--project-dir PATH] [--port-file PATH]\n" +
	"       either form also takes [--answer-within DURATION]\n"

// The words of a refused start-up file of `buildguard mcp --http`
// (docs/decisions.md#D14), by the file and its problem; like the other
// startup failures each is printed with the usage, exit 2.
const (
	mcpTokenForm    = "--token-file must hold one token of 16 to 4096 printable ASCII characters without spaces"
	mcpTokenPrivate = "--token-file must be readable by its owner only"
	mcpURLFileOwn   = "--url-file must name a regular file or a new file"
)

// mcpFileWords words each refusal mcp.Serve ends with, by the file and
// its problem.
var mcpFileWords = map[mcp.StartFile]map[boundedfile.Problem]string{
	mcp.TokenFile: {boundedfile.Unreadable: mcpTokenForm, boundedfile.Malformed: mcpTokenForm, boundedfile.NotPrivate: mcpTokenPrivate},
	mcp.URLFile:   {boundedfile.Unreadable: mcpURLFileOwn, boundedfile.NotOwnable: mcpURLFileOwn},
}

// runMCP runs `buildguard mcp [--project-dir PATH] [--port-file PATH]`: it
// parses the startup options before touching stdio, then hands the server's
// life to mcp.Serve: MCP over stdin/stdout until stdin reaches EOF (exit 0),
// or with --http ADDR over streamable HTTP until a stop signal (exit 0,
// 131 for SIGQUIT, as the wrapper). How it ended is worded here, in the
// command's flags. Logs go to stderr (docs/decisions.md#D9); when stdout is
// the process's stdout, os.Stdout points at stderr meanwhile, so a stray
// print cannot corrupt the protocol stream.
func runMCP(args []string, stdin io.Reader, stdout, stderr io.Writer) ExitCode {
	wd, wdErr := os.Getwd()
	o, err := parseMCPArgs(args, wd)
	switch {
	case errors.Is(err, flag.ErrHelp):
		fmt.Fprint(stderr, mcpUsage)
		return ExitOK
	case wdErr != nil:
		fmt.Fprintf(stderr, "buildguard mcp: cannot read the working directory: %v\n", wdErr)
		return ExitFailure
	case err != nil:
		fmt.Fprintf(stderr, "%v\n%s", err, mcpUsage)
		return ExitUsage
	}
	if f, ok := stdout.(*os.File); ok && f == os.Stdout {
		os.Stdout = os.Stderr
		defer func() { os.Stdout = f }()
	}
	log := wrapLogger(stderr).Named("mcp")
	// One watchdog for all the builds of this server, started with the
	// first: their processes end with the server, however it ends
	// (docs/safe-build.md#4).
	defer buildqueue.EnableWatchdog(log.Named("watchdog")).Stop()
	o.Logger = log.Named("safebuild")
	end := mcp.Serve(mcp.Life{Tools: o.Deps, HTTP: mcp.HTTPLife{Listen: o.http.listen, URLHost: o.http.urlHost, TokenFile: o.http.tokenFile, URLFile: o.http.urlFile}},
		mcp.Process{Stdin: stdin, Stdout: stdout, Announce: stderr, Name: "buildguard mcp", Log: log, Stop: stopSignals(), Version: version()})
	var refused *boundedfile.Refusal
	isRefusal := errors.As(end.Err, &refused)
	switch {
	case end.Stage == mcp.Refused && isRefusal:
		fmt.Fprintf(stderr, "%s: %v\n%s", mcpFileWords[end.File][refused.Problem], end.Err, mcpUsage)
		return ExitUsage
	case end.Stage == mcp.NotListening:
		fmt.Fprintf(stderr, "buildguard mcp: cannot listen on %s: %v\n", o.http.addr, end.Err)
		return ExitFailure
	case end.Stage == mcp.NoURLFile && isRefusal:
		fmt.Fprintf(stderr, "buildguard mcp: cannot write --url-file %s: %s: %v\n", o.http.urlFile, mcpFileWords[mcp.URLFile][refused.Problem], end.Err)
		return ExitUsage
	case end.Stage == mcp.NoURLFile:
		fmt.Fprintf(stderr, "buildguard mcp: cannot write --url-file %s: %v\n", o.http.urlFile, end.Err)
		return ExitFailure
	case end.Err != nil:
		return ExitFailure
	case end.Signal != nil && (o.http.addr == "" || end.Signal == syscall.SIGQUIT):
		return signalExit(end.Signal)
	}
	return ExitOK
}
