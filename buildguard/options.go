package buildguard

import (
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/buildguard/buildguard/agentproto"
)

// Options are the wrapper's settings as a front gives them
// (docs/decisions.md#D1, docs/mcp-server.md#6): raw values, nil when the
// option is absent. Config checks each by the one rule the contract gives
// it, so that a front passes them through and prints what comes back.
type Options struct {
	Port       *string // SettingPort
	PortFile   *string // SettingPortFile
	Owner      *string // SettingOwner
	TimeoutMs  *string // SettingTimeout, in milliseconds
	Grace      *string // SettingGrace, a Go duration
	Transcript *string // SettingTranscript
	// Continuous asks for a continuous Gradle build guarded cycle by cycle
	// (Guard.RunContinuous, docs/decisions.md#D20); Config ignores it.
	Continuous bool
}

// ErrInvalidOption means an option's value cannot be used at all, a usage
// error like an invalid owner (docs/decisions.md#D8): nothing connects and
// no owner line is printed.
var ErrInvalidOption = errors.New("invalid option")

// OptionError is a usage error in one option: its value cannot be used at
// all. It wraps ErrInvalidOwner (Setting is SettingOwner) or
// ErrInvalidOption; a front says how its users give the setting instead.
type OptionError struct {
	// Setting is the option that is wrong.
	Setting Setting
	// Err says what is wrong with it.
	Err error
}

func (e *OptionError) Error() string { return e.Err.Error() }

func (e *OptionError) Unwrap() error { return e.Err }

// Config returns the Config the options ask for. It fails only for usage
// errors, an *OptionError: an --owner that is given is checked, also when
// empty (without one a fresh UUID owns the build), and --grace must be a
// duration. Every other problem refuses the build: Guard.Run reports it,
// as a *RefusalError, after the owner line, and the command never runs.
func (o Options) Config() (Config, error) {
	var c Config
	if o.Owner != nil {
		if err := CheckOwner(*o.Owner); err != nil {
			return c, &OptionError{Setting: SettingOwner, Err: err}
		}
		c.Owner = *o.Owner
	}
	if o.Grace != nil {
		d, err := time.ParseDuration(*o.Grace)
		if err != nil || d < 0 {
			return c, &OptionError{Setting: SettingGrace, Err: fmt.Errorf("%w: the grace period needs a duration such as 10s or 500ms", ErrInvalidOption)}
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
// refused before it connects, or nil: a blank port first, then the
// timeout, then the endpoint, as the checks happen in Run.
func (o Options) refusal(c *Config) *RefusalError {
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
		c.Endpoint.Port = *o.Port // the port wins over the port file
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

// ParseTimeoutMs parses a timeout given in milliseconds as the contract
// does (Java int syntax, 1..60000 ms; docs/mcp-server.md#6). The error is a
// *RefusalError with FixTimeout.
func ParseTimeoutMs(s string) (time.Duration, *RefusalError) {
	ms, ok := agentproto.ParseJavaInt(s)
	if !ok {
		return 0, refused(FixTimeout, "invalid timeout")
	}
	d := time.Duration(ms) * time.Millisecond
	return d, checkTimeout(d)
}

// checkTimeout is the one range rule of a guarded build's timeout.
func checkTimeout(d time.Duration) *RefusalError {
	if d < time.Millisecond || d > MaxTimeout {
		return refused(FixTimeout, "the timeout must be between 1 and 60000 milliseconds")
	}
	return nil
}

// refusedEndpoint is the refusal for endpoint e that cannot be resolved.
func refusedEndpoint(e agentproto.Endpoint, err error) *RefusalError {
	fix := FixPortFile
	switch {
	case errors.Is(err, agentproto.ErrNoPortFile) && e.PortFile == "":
		fix = FixDiscovery
	case errors.Is(err, agentproto.ErrInvalidPort):
		fix = FixPort
	}
	return &RefusalError{Problem: err, Fix: fix}
}

// refusedStart is the refusal for a `BUILD started` that was not
// acknowledged.
func refusedStart(err error) *RefusalError {
	fix := FixRetry
	switch {
	case errors.Is(err, agentproto.ErrRejected):
		fix = FixOwner
	case errors.Is(err, agentproto.ErrTimeout):
		fix = FixAckTimeout
	case errors.Is(err, agentproto.ErrNoOwner):
		fix = FixUpgradeAgent
	}
	return &RefusalError{Stage: "BUILD started was not acknowledged; the command was not run", Problem: err, Fix: fix}
}
