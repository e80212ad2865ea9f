package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/buildguard/buildguard/mcp"
	"github.com/buildguard/buildguard/service/buildqueue"
	"github.com/buildguard/buildguard/service/tools"
)

// mcpUsage is the usage line of `buildguard mcp` (docs/mcp-server.md#1.1);
// the second line is the HTTP form (docs/decisions.md#D14).
const mcpUsage = "Usage: buildguard mcp [--project-dir PATH] [--port-file PATH]\n" +
	"       buildguard mcp --http ADDR [--token-file FILE] [--url-file FILE] [--project-dir PATH] [--port-file PATH]\n" +
	"       either form also takes [--answer-within DURATION]\n"

// runMCP runs `buildguard mcp [--project-dir PATH] [--port-file PATH]`: it
// parses the startup options before touching stdio, then serves MCP over
// stdin/stdout until stdin reaches EOF (exit 0); with --http ADDR it serves
// streamable HTTP instead (serveMCPHTTP). Logs go to stderr (docs/decisions.md#D9); when
// stdout is the process's stdout, os.Stdout points at stderr meanwhile, so a
// stray print cannot corrupt the protocol stream.
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
	svc := tools.NewService(o.Deps)
	srv := mcp.NewServer(mcp.Config{Caller: svc, Version: version(), Logger: log})
	if o.http.addr != "" {
		return serveMCPHTTP(srv, svc, o.http, stderr, log)
	}
	// A signal ends the server as it always did, but not before a running
	// safe build was stopped and its BUILD failed confirmed: the build's
	// processes would otherwise outlive the server (docs/safe-build.md#6).
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, stopSignals()...)
	defer signal.Stop(sigs)
	served := make(chan error, 1)
	go func() { served <- srv.ServeStdio(context.Background(), stdin, stdout) }()
	select {
	case err := <-served:
		// Input ended: safe builds running as tasks end as a cancellation
		// ends them (docs/decisions.md#D17), and so do those that went on
		// without their call: no client is left to resume them
		// (docs/safe-build.md#14).
		closeTasks(srv, log)
		stopBuilds(svc, log)
		if err != nil {
			log.Error("MCP session failed", "error", err)
			return ExitFailure
		}
		return ExitOK
	case s := <-sigs:
		log.Info("stopping on a signal; a running safe build is cancelled first", "signal", s)
		closeTasks(srv, log)
		svc.Stop()
		return signalExit(s)
	}
}

// taskStopTimeout bounds the wait for safe builds running as tasks at the
// end of a stdio server, as for a build call at EOF (docs/safe-build.md#6).
const taskStopTimeout = 30 * time.Second

// stopBuilds stops the service's safe builds, as svc.Stop does, waiting at
// most taskStopTimeout for them.
func stopBuilds(svc *tools.Service, log hclog.Logger) {
	stopped := make(chan struct{})
	go func() {
		svc.Stop()
		close(stopped)
	}()
	select {
	case <-stopped:
	case <-time.After(taskStopTimeout):
		log.Warn("exiting with a safe build still stopping")
	}
}

// closeTasks cancels the safe builds that run as tasks and waits for their
// BUILD failed, at most taskStopTimeout.
func closeTasks(srv *mcp.Server, log hclog.Logger) {
	ctx, cancel := context.WithTimeout(context.Background(), taskStopTimeout)
	defer cancel()
	if err := srv.Close(ctx); err != nil {
		log.Warn("exiting with a safe build task still stopping", "error", err)
	}
}
