package agentproto

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// The BUILD states.
const (
	BuildStarted = "started"
	BuildOK      = "ok"
	BuildFailed  = "failed"
)

// The RELOAD actions.
const (
	ReloadPause  = "pause"
	ReloadResume = "resume"
	ReloadStatus = "status"
)

// errSkip tells await that a line is not the awaited reply.
var errSkip = errors.New("not the awaited reply")

// await reads INFO messages until match accepts one (nil) or rejects the
// exchange (another error). match returns errSkip for lines to pass over.
// Lines that are not JSON objects fail at once; other levels and events
// without a string message are skipped.
func (c *Conn) await(ctx context.Context, match func(msg string) error) error {
	for {
		line, err := c.readLine()
		if err != nil {
			return c.readFailure(ctx, err)
		}
		ev, err := ParseEvent(line)
		if err != nil {
			return &wireError{msg: ErrInvalidResponse.Error(), errs: []error{ErrInvalidResponse, err}}
		}
		if ev.Level != LevelInfo || !ev.HasMessage {
			continue
		}
		if err := match(ev.Message); !errors.Is(err, errSkip) {
			return err
		}
	}
}

// readFailure maps a failed read while awaiting a correlated reply.
func (c *Conn) readFailure(ctx context.Context, err error) error {
	err = c.cause(ctx, err)
	switch {
	case errors.Is(err, ErrTooLong), errors.Is(err, context.Canceled):
		return err
	case errors.Is(err, os.ErrDeadlineExceeded):
		return &wireError{msg: ErrTimeout.Error(), errs: []error{ErrTimeout, err}}
	case errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF):
		return &wireError{msg: ErrDisconnected.Error(), errs: []error{ErrDisconnected, err}}
	}
	return &wireError{msg: ErrDisconnected.Error(), errs: []error{ErrDisconnected, err}}
}

// request sends line and awaits the reply match accepts, within ctx.
func (c *Conn) request(ctx context.Context, line string, match func(msg string) error) error {
	stop := c.bind(ctx)
	defer stop()
	if err := c.send(ctx, line); err != nil {
		return err
	}
	return c.await(ctx, match)
}

// Build sends "BUILD <state> request=<token> owner=<owner>" and waits for
// exactly "BUILD_ACK <token> <state> owner=<owner>" (nil) or
// "BUILD_REJECTED <token> <state> owner=<owner>" (ErrRejected). Acks for other
// tokens or owners are skipped. An answer to this very request without the
// owner suffix (an agent older than build ownership) fails at once with
// ErrInvalidResponse and ErrNoOwner: that agent never sends the ack awaited.
// An acknowledged "ok" means the agent scheduled the capture of the held
// output, not that anything was reloaded. It is SendBuild and its wait,
// both within ctx.
func (c *Conn) Build(ctx context.Context, state, owner string) error {
	wait, err := c.SendBuild(ctx, state, owner)
	if err != nil {
		return err
	}
	return wait(ctx)
}

// SendBuild sends "BUILD <state> request=<token> owner=<owner>" within ctx
// and returns the wait for its answer, which returns what Build returns:
// for a client that may stop waiting (a second interrupt,
// docs/decisions.md#D23) and must know whether the state was sent. The
// wait ends with its own ctx; nothing else may use the connection until it
// returned.
func (c *Conn) SendBuild(ctx context.Context, state, owner string) (wait func(context.Context) error, err error) {
	if state != BuildStarted && state != BuildOK && state != BuildFailed {
		return nil, fmt.Errorf("%w: BUILD state %q", ErrInvalidCommand, state)
	}
	if !ValidToken(owner) {
		return nil, fmt.Errorf("%w: owner must be 1-64 ASCII letters, digits, _ or -", ErrInvalidCommand)
	}
	tok := NewToken()
	suffix := tok + " " + state + " owner=" + owner
	ack, rejected := "BUILD_ACK "+suffix, "BUILD_REJECTED "+suffix
	stop := c.bind(ctx)
	err = c.send(ctx, "BUILD "+state+" request="+tok+" owner="+owner)
	stop()
	if err != nil {
		return nil, err
	}
	return func(ctx context.Context) error {
		stop := c.bind(ctx)
		defer stop()
		return c.await(ctx, func(msg string) error {
			switch msg {
			case ack:
				return nil
			case rejected:
				return ErrRejected
			case "BUILD_ACK " + tok + " " + state, "BUILD_REJECTED " + tok + " " + state:
				return &wireError{msg: ErrInvalidResponse.Error() + ": " + ErrNoOwner.Error(), errs: []error{ErrInvalidResponse, ErrNoOwner}}
			}
			return errSkip
		})
	}, nil
}

// Doctor sends "DOCTOR <token>" and returns the validated evidence
// (docs/agent-protocol.md#7). A reply the agent marked "unavailable" is returned
// as such, with only RequestID, Status and Detail set; any reply that breaks a
// rule fails with ErrInvalidResponse.
func (c *Conn) Doctor(ctx context.Context) (*Doctor, error) {
	tok := NewToken()
	prefix := "DOCTOR_RESULT " + tok + " "
	var d *Doctor
	err := c.request(ctx, "DOCTOR "+tok, func(msg string) error {
		rest, ok := strings.CutPrefix(msg, prefix)
		if !ok {
			return errSkip
		}
		var err error
		d, err = parseDoctor(tok, rest)
		return err
	})
	return d, err
}

// ConfirmProject is the explicit-project gate (docs/mcp-server.md#1.2): on this
// connection, before any requested command, it asks DOCTOR and requires
// observed evidence whose workingDirectory is absolute and whose real path is
// projectDir or lies below it. Any failure — no reply, an old agent, evidence
// marked unavailable, a directory elsewhere — wraps ErrProjectNotConfirmed.
func (c *Conn) ConfirmProject(ctx context.Context, projectDir string) error {
	fail := func(cause error) error {
		return &wireError{msg: ErrProjectNotConfirmed.Error(), errs: []error{ErrProjectNotConfirmed, cause}}
	}
	d, err := c.Doctor(ctx)
	if err != nil {
		return fail(err)
	}
	if d.Status != DoctorObserved {
		return fail(errors.New("doctor evidence unavailable"))
	}
	if !filepath.IsAbs(d.WorkingDirectory) {
		return fail(fmt.Errorf("workingDirectory %q is not absolute", d.WorkingDirectory))
	}
	wd, err := filepath.EvalSymlinks(d.WorkingDirectory)
	if err != nil {
		return fail(fmt.Errorf("resolving workingDirectory: %w", err))
	}
	project, err := filepath.EvalSymlinks(projectDir)
	if err != nil {
		return fail(fmt.Errorf("resolving the project directory: %w", err))
	}
	if !within(project, wd) {
		return fail(fmt.Errorf("workingDirectory %s is outside %s", wd, project))
	}
	return nil
}

// within reports whether path is dir or below it, comparing whole path
// components (/x/AB is not below /x/A).
func within(dir, path string) bool {
	rel, err := filepath.Rel(dir, path)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) && !filepath.IsAbs(rel)
}

// Verify sends "VERIFY <token> <class> <sha256>" and returns the validated
// receipt (docs/agent-protocol.md#8). Only Status "applied" proves that exactly
// these bytes were reloaded; the receipt is a point-in-time answer.
func (c *Conn) Verify(ctx context.Context, class, sha256 string) (*Receipt, error) {
	if !ValidClassName(class) || !ValidSHA256(sha256) {
		return nil, fmt.Errorf("%w: VERIFY needs a binary class name and a lower-case sha256", ErrInvalidCommand)
	}
	tok := NewToken()
	prefix := "VERIFY_RESULT " + tok + " "
	var r *Receipt
	err := c.request(ctx, "VERIFY "+tok+" "+class+" "+sha256, func(msg string) error {
		rest, ok := strings.CutPrefix(msg, prefix)
		if !ok {
			return errSkip
		}
		var err error
		r, err = parseReceipt(tok, class, sha256, rest)
		return err
	})
	return r, err
}

// Reload sends "RELOAD <action> request=<token>" and returns the validated
// admission snapshot. It is not completion: a resume admits pending changes
// asynchronously, and never releases a BUILD hold.
func (c *Conn) Reload(ctx context.Context, action string) (*ReloadState, error) {
	if action != ReloadPause && action != ReloadResume && action != ReloadStatus {
		return nil, fmt.Errorf("%w: RELOAD action %q", ErrInvalidCommand, action)
	}
	tok := NewToken()
	prefix := "RELOAD_STATE " + tok + " " + action + " "
	var st *ReloadState
	err := c.request(ctx, "RELOAD "+action+" request="+tok, func(msg string) error {
		rest, ok := strings.CutPrefix(msg, prefix)
		if !ok {
			return errSkip
		}
		var err error
		st, err = parseReloadState(action, rest)
		return err
	})
	return st, err
}

// Scan sends SCAN and returns once it is written: protocol 1 has no
// acknowledgement, so success means only that the agent was asked.
func (c *Conn) Scan(ctx context.Context) error {
	stop := c.bind(ctx)
	defer stop()
	return c.send(ctx, "SCAN")
}

// Discard reads and drops whatever the agent sends until ctx ends, and then
// returns nil. A long build holds its connection without awaiting anything;
// reading it meanwhile keeps broadcasts from filling the agent's bounded
// outbox for this connection, which would drop the next reply. A line cut
// off when ctx ends is kept for the next read. It returns an error wrapping
// ErrDisconnected when the connection ends first.
func (c *Conn) Discard(ctx context.Context) error {
	stop := c.bind(ctx)
	defer stop()
	for {
		_, err := c.readLine()
		switch {
		case err == nil, errors.Is(err, ErrTooLong):
			continue
		case ctx.Err() != nil, isTimeout(err) && deadlinePassed(ctx):
			// The socket deadline (ctx's) can fire just before ctx reports it.
			return nil
		}
		return c.readFailure(ctx, err)
	}
}

func deadlinePassed(ctx context.Context) bool {
	dl, ok := ctx.Deadline()
	return ok && !time.Now().Before(dl)
}
