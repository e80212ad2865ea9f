package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"time"
	"unicode"

	"github.com/hashicorp/go-hclog"

	"github.com/buildguard/buildguard/agentproto"
	"github.com/buildguard/buildguard/mcp"
	"github.com/buildguard/buildguard/service/buildqueue"
	"github.com/buildguard/buildguard/service/tools"
)

//lint:file-ignore ST1005 the startup errors are the contract's messages (docs/mcp-server.md#1.1), printed as they are.

// mcpUsage is the usage line of `buildguard mcp` (docs/mcp-server.md#1.1);
// the second line is the HTTP form (docs/decisions.md#D14).
const mcpUsage = "Usage: buildguard mcp [--project-dir PATH] [--port-file PATH]\n" +
	"       buildguard mcp --http ADDR [--token-file FILE] [--url-file FILE] [--project-dir PATH] [--port-file PATH]\n"

// The startup parse failures of `buildguard mcp` (docs/mcp-server.md#1.1); each
// is printed on stderr, followed by the usage line, with exit 2.
var (
	errMCPUnknownOption = errors.New("Unknown MCP startup option")
	errMCPBadPath       = errors.New("Path must be nonblank, at most 4096 characters and contain no control characters")
	errMCPNoProject     = errors.New("projectDir must name an existing directory")
)

// errMCPMissingValue is "Duplicate option or missing value: <flag>".
func errMCPMissingValue(flag string) error {
	return fmt.Errorf("Duplicate option or missing value: %s", flag)
}

// maxPathChars bounds a startup path, in UTF-16 units.
const maxPathChars = 4096

// runMCP runs `buildguard mcp [--project-dir PATH] [--port-file PATH]`: it
// parses the startup options before touching stdio, then serves MCP over
// stdin/stdout until stdin reaches EOF (exit 0); with --http ADDR it serves
// streamable HTTP instead (serveMCPHTTP). Logs go to stderr (docs/decisions.md#D9); when
// stdout is the process's stdout, os.Stdout points at stderr meanwhile, so a
// stray print cannot corrupt the protocol stream.
func runMCP(args []string, stdin io.Reader, stdout, stderr io.Writer) ExitCode {
	if len(args) == 1 && args[0] == "--help" {
		fmt.Fprint(stderr, mcpUsage)
		return ExitOK
	}
	wd, err := os.Getwd()
	if err != nil {
		fmt.Fprintf(stderr, "buildguard mcp: cannot read the working directory: %v\n", err)
		return ExitFailure
	}
	rest, httpOpts, err := splitHTTPArgs(args)
	if err != nil {
		fmt.Fprintf(stderr, "%v\n%s", err, mcpUsage)
		return ExitUsage
	}
	cfg, err := parseMCPArgs(rest, wd)
	if err != nil {
		fmt.Fprintf(stderr, "%v\n%s", err, mcpUsage)
		return ExitUsage
	}
	var token string
	if httpOpts.addr != "" {
		if token, err = readToken(httpOpts.tokenFile); err != nil {
			fmt.Fprintf(stderr, "%v\n%s", err, mcpUsage)
			return ExitUsage
		}
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
	cfg.Logger = log.Named("safebuild")
	svc := tools.NewService(cfg)
	srv := mcp.NewServer(mcp.Config{Caller: svc, Version: version(), Logger: log})
	if httpOpts.addr != "" {
		return serveMCPHTTP(srv, svc, httpOpts, token, stderr, log)
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
		// ends them (docs/decisions.md#D17).
		closeTasks(srv, log)
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

// parseMCPArgs parses the startup options and resolves the paths against the
// working directory wd (docs/mcp-server.md#1.1): --project-dir is canonicalised
// and must be a directory; --port-file resolves against the project (else
// wd), absolute and clean but not canonicalised, and need not exist yet.
func parseMCPArgs(args []string, wd string) (tools.Deps, error) {
	var projectDir, portFile string
	seen := map[string]bool{}
	for i := 0; i < len(args); i++ {
		flag := args[i]
		if flag != "--project-dir" && flag != "--port-file" {
			return tools.Deps{}, errMCPUnknownOption
		}
		if seen[flag] || i+1 >= len(args) || strings.HasPrefix(args[i+1], "--") {
			return tools.Deps{}, errMCPMissingValue(flag)
		}
		seen[flag] = true
		i++
		if !validStartupPath(args[i]) {
			return tools.Deps{}, errMCPBadPath
		}
		if flag == "--project-dir" {
			projectDir = args[i]
		} else {
			portFile = args[i]
		}
	}
	base, err := filepath.Abs(wd)
	if err != nil {
		return tools.Deps{}, fmt.Errorf("resolving the working directory: %w", err)
	}
	cfg := tools.Deps{Base: base, ClientWorkingDirectory: wd}
	if seen["--project-dir"] {
		real, err := filepath.EvalSymlinks(resolvePath(base, projectDir))
		if err != nil {
			return tools.Deps{}, errMCPNoProject
		}
		if st, err := os.Stat(real); err != nil || !st.IsDir() {
			return tools.Deps{}, errMCPNoProject
		}
		cfg.Base, cfg.ProjectSelected = real, true
	}
	if seen["--port-file"] {
		cfg.StartupPortFile = resolvePath(cfg.Base, portFile)
	}
	return cfg, nil
}

// resolvePath makes p absolute against base and cleans it.
func resolvePath(base, p string) string {
	if filepath.IsAbs(p) {
		return filepath.Clean(p)
	}
	return filepath.Join(base, p)
}

// validStartupPath: nonblank (Java's isBlank), at most 4096 UTF-16 units, no
// ISO control character (C0, DEL, C1).
func validStartupPath(p string) bool {
	if agentproto.IsBlank(p) || agentproto.UTF16Len(p) > maxPathChars {
		return false
	}
	return !strings.ContainsFunc(p, unicode.IsControl)
}

// taskStopTimeout bounds the wait for safe builds running as tasks at the
// end of a stdio server, as for a build call at EOF (docs/safe-build.md#6).
const taskStopTimeout = 30 * time.Second

// closeTasks cancels the safe builds that run as tasks and waits for their
// BUILD failed, at most taskStopTimeout.
func closeTasks(srv *mcp.Server, log hclog.Logger) {
	ctx, cancel := context.WithTimeout(context.Background(), taskStopTimeout)
	defer cancel()
	if err := srv.Close(ctx); err != nil {
		log.Warn("exiting with a safe build task still stopping", "error", err)
	}
}
