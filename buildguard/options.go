package buildguard

import (
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/buildguard/buildguard/agentproto"
)

// Options are the wrapper's settings as its command line gives them
// (docs/decisions.md#D1, docs/mcp-server.md#6): raw values, nil when the
// option is absent. Config checks each by the one rule the contract gives
// it, so that a front passes them through and prints what comes back.
type Options struct {
	Port       *string // --port N
	PortFile   *string // --port-file PATH
	Owner      *string // --owner TOKEN
	TimeoutMs  *string // --timeout-ms N
	Grace      *string // --grace DURATION
	Transcript *string // --transcript FILE
}

// ErrInvalidOption means an option's value cannot be used at all, a usage
// error like an invalid owner (docs/decisions.md#D8): nothing connects and
// no owner line is printed.
var ErrInvalidOption = errors.New("invalid option")

// Config returns the Config the options ask for. It fails only for usage
// errors, wrapping ErrInvalidOwner (an --owner that is given is checked, also
// when empty; without one a fresh UUID owns the build) or ErrInvalidOption
// (--grace). Every other problem refuses the build: Guard.Run reports it,
// wrapped in ErrRefused, after the owner line, and the command never runs.
// Each refusal says what to do next.
func (o Options) Config() (Config, error) {
	var c Config
	if o.Owner != nil {
		if err := CheckOwner(*o.Owner); err != nil {
			return c, fmt.Errorf("%w; to recover, pass the owner the build printed, or leave --owner out for a fresh one", err)
		}
		c.Owner = *o.Owner
	}
	if o.Grace != nil {
		d, err := time.ParseDuration(*o.Grace)
		if err != nil || d < 0 {
			return c, fmt.Errorf("%w: --grace needs a duration such as 10s or 500ms", ErrInvalidOption)
		}
		if d == 0 {
			d = -1 // no grace: kill at once
		}
		c.Grace = d
	}
	c.refusal = o.refusal(&c)
	if o.Transcript != nil {
		c.transcriptPath = *o.Transcript
	}
	return c, nil
}

// refusal sets the endpoint and timeout of c and returns why the build is
// refused before it connects, or nil: a blank --port first, then the
// timeout, then the endpoint, as the checks happen in Run.
func (o Options) refusal(c *Config) error {
	if o.Port != nil && agentproto.IsBlank(*o.Port) {
		return refusedEndpoint(c.Endpoint, fmt.Errorf("%w: %s", agentproto.ErrInvalidPort, *o.Port))
	}
	if o.TimeoutMs != nil {
		d, err := ParseTimeoutMs(*o.TimeoutMs)
		if err != nil {
			return err
		}
		c.Timeout = d
	}
	switch {
	case o.Port != nil:
		c.Endpoint.Port = *o.Port // --port wins over --port-file
	case o.PortFile != nil && *o.PortFile == "":
		// Resolved against the working directory, as a relative path is:
		// a directory, not a port file.
		wd, _ := os.Getwd()
		return refusedEndpoint(c.Endpoint, fmt.Errorf("%w: %s", agentproto.ErrUnreadablePortFile, wd))
	case o.PortFile != nil:
		c.Endpoint.PortFile = *o.PortFile
	}
	return nil
}

// ParseTimeoutMs parses a --timeout-ms value as the contract does (Java
// int syntax, 1..60000 ms; docs/mcp-server.md#6). The error wraps
// ErrRefused.
func ParseTimeoutMs(s string) (time.Duration, error) {
	ms, ok := agentproto.ParseJavaInt(s)
	if !ok {
		return 0, fmt.Errorf("%w: Invalid timeoutMs; %s", ErrRefused, timeoutNext)
	}
	d := time.Duration(ms) * time.Millisecond
	return d, checkTimeout(d)
}

// checkTimeout is the one range rule of a guarded build's timeout.
func checkTimeout(d time.Duration) error {
	if d < time.Millisecond || d > MaxTimeout {
		return fmt.Errorf("%w: timeoutMs must be between 1 and 60000; %s", ErrRefused, timeoutNext)
	}
	return nil
}

// What a refusal tells the user to do next.
const (
	timeoutNext  = "pass --timeout-ms a whole number of milliseconds from 1 to 60000"
	endpointNext = "point --port-file at the port file the running agent wrote (.reclazz/agent.port in its project), or pass --port N"
	// startNext is for an agent that is not there or not answering.
	startNext = "start the application with the Reclazz agent attached, or point --port/--port-file at its current port"
)

// refusedEndpoint is the refusal for endpoint e that cannot be resolved,
// with what to do next.
func refusedEndpoint(e agentproto.Endpoint, err error) error {
	next := endpointNext
	switch {
	case errors.Is(err, agentproto.ErrNoPortFile) && e.PortFile == "":
		next = "run buildguard in the application's project directory, where the agent writes .reclazz/agent.port, or pass --port-file PATH or --port N"
	case errors.Is(err, agentproto.ErrInvalidPort):
		next = "pass --port the agent's port (1 to 65535), or --port-file its port file"
	}
	return fmt.Errorf("%w: %w; %s", ErrRefused, err, next)
}

// refusedStart is the refusal for a `BUILD started` that was not
// acknowledged, with what to do next.
func refusedStart(err error) error {
	next := "check that the application is running and responsive, and retry"
	switch {
	case errors.Is(err, agentproto.ErrRejected):
		next = "another build holds the output: rerun it with the --owner it printed to finish or recover it, or restart the application if that owner is lost"
	case errors.Is(err, agentproto.ErrTimeout):
		next = "the agent did not answer in time: check that the application is responsive, or raise --timeout-ms"
	}
	return fmt.Errorf("%w: BUILD started was not acknowledged; the command was not run: %w; %s", ErrRefused, err, next)
}
