package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"sync"

	"github.com/buildguard/buildguard/service/hostconfig"
)

// runInitCheck is `init --check`: hostconfig.Checks first reads what each
// host would start — its command, args, env and working directory, with
// the host's variables expanded, serving this project — and
// hostconfig.CheckEntry then starts each entry as the host would start
// it: it must answer the MCP handshake as buildguard and list our tools
// within 10 s. One OK or FAIL line per host on stdout, with what to do in
// the command line's words; exit 1 on any FAIL. A host that was
// not asked for by name and has no entry is skipped. A stop signal
// (SIGINT, SIGTERM, …) ends the server under check with its process
// group, checks no further host, and exits 128+signal.
func runInitCheck(req hostconfig.Request, stdout, stderr io.Writer) ExitCode {
	ctx, interrupted, release := interruptible()
	defer release()
	checks, err := hostconfig.Checks(req, os.LookupEnv)
	if err != nil {
		fmt.Fprintf(stderr, "buildguard init: %v\n", err)
		return ExitUsage
	}
	code := ExitOK
	for _, c := range checks {
		if ctx.Err() != nil {
			break
		}
		err := c.Err
		if err == nil {
			var detail string
			detail, err = hostconfig.CheckEntry(ctx, c.Entry, version())
			if ctx.Err() != nil {
				break
			}
			if err == nil {
				if len(c.Unchecked) > 0 {
					detail += "; not read, so not checked for settings that disable it: " + strings.Join(c.Unchecked, ", ")
				}
				fmt.Fprintf(stdout, "OK   %-8s %s: %s\n", c.Host.Name, c.File, detail)
				continue
			}
		}
		code = ExitFailure
		reason := err.Error()
		_, notFound := errors.AsType[*hostconfig.NotFoundError](err)
		switch {
		case errors.Is(err, hostconfig.ErrNoEntry):
			reason += fmt.Sprintf("; run buildguard init --host %s", c.Host.Name)
		case errors.Is(err, hostconfig.ErrOtherVersion):
			reason += ": run buildguard init again"
		case notFound:
			reason += ": install buildguard in a directory on PATH, or run buildguard init --absolute to name this machine's binary"
		}
		fmt.Fprintf(stdout, "FAIL %-8s %s: %s\n", c.Host.Name, c.File, reason)
	}
	if s := interrupted(); s != nil {
		fmt.Fprintf(stderr, "buildguard init --check: interrupted (%v); the server under check was ended with its process group, and no further host was checked\n", s)
		return signalExit(s)
	}
	if len(checks) == 0 {
		fmt.Fprintln(stderr, "buildguard init --check: no host has a buildguard entry; run buildguard init first")
		return ExitFailure
	}
	return code
}

// interruptible returns a context that a stop signal ends, the signal that
// ended it (nil until one has), and release, which stops catching them.
func interruptible() (ctx context.Context, interrupted func() os.Signal, release func()) {
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, stopSignals()...)
	ctx, cancel := context.WithCancel(context.Background())
	var mu sync.Mutex
	var got os.Signal
	done := make(chan struct{})
	go func() {
		select {
		case s := <-sigs:
			mu.Lock()
			got = s
			mu.Unlock()
			cancel()
		case <-done:
		}
	}()
	interrupted = func() os.Signal {
		mu.Lock()
		defer mu.Unlock()
		return got
	}
	return ctx, interrupted, func() {
		signal.Stop(sigs)
		close(done)
		cancel()
	}
}
