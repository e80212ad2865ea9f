package agentproto

import (
	"context"
	"errors"
	"io"
	"time"
)

// QuietPeriod is how long a broadcast query waits for another line once it
// has collected one (docs/mcp-server.md#3.3).
const QuietPeriod = 500 * time.Millisecond

// Query sends a broadcast command — HEALTH, PENDING or "DIAGNOSE <class>" —
// and collects the INFO messages that follow. These replies carry no request
// token and no end marker, so collection stops at the first quiet period
// after a line, at a HEARTBEAT after a line, at EOF, or at ctx's deadline; the
// lines may include unrelated INFO traffic. With no line collected the error
// wraps ErrNoInfo. A blank INFO message or a line that is not a JSON object
// wraps ErrInvalidResponse; the lines collected before any error are returned
// with it. Lines are bounded by MaxBroadcastLineBytes, not MaxReplyChars.
func (c *Conn) Query(ctx context.Context, command string) ([]string, error) {
	stop := c.bind(ctx)
	defer stop()
	if err := c.send(ctx, command); err != nil {
		return nil, err
	}
	deadline, hasDeadline := ctx.Deadline()
	var lines []string
	for {
		if len(lines) > 0 {
			quiet := time.Now().Add(QuietPeriod)
			if !hasDeadline || quiet.Before(deadline) {
				c.nc.SetReadDeadline(quiet)
			}
		}
		line, err := c.readBroadcastLine()
		if err != nil {
			return c.queryEnd(ctx, lines, err)
		}
		ev, err := ParseEvent(line)
		if err != nil {
			return lines, &wireError{msg: ErrInvalidResponse.Error(), errs: []error{ErrInvalidResponse, err}}
		}
		switch ev.Level {
		case LevelHeartbeat:
			if len(lines) > 0 {
				return lines, nil
			}
		case LevelInfo:
			if !ev.HasMessage || IsBlank(ev.Message) {
				return lines, &wireError{msg: ErrInvalidResponse.Error(), errs: []error{ErrInvalidResponse, errors.New("blank INFO message")}}
			}
			lines = append(lines, ev.Message)
		}
	}
}

// queryEnd decides what a read failure means for a broadcast query: the end
// of the answer (quiet period, deadline, EOF) or a failure.
func (c *Conn) queryEnd(ctx context.Context, lines []string, err error) ([]string, error) {
	ended := errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) || isTimeout(err)
	if errors.Is(c.cause(ctx, err), context.Canceled) {
		return lines, ctx.Err()
	}
	switch {
	case ended && len(lines) > 0:
		return lines, nil
	case ended:
		return nil, &wireError{msg: ErrNoInfo.Error(), errs: []error{ErrNoInfo, c.cause(ctx, err)}}
	case errors.Is(err, ErrTooLong):
		return lines, err
	}
	return lines, &wireError{msg: ErrIO.Error(), errs: []error{ErrIO, err}}
}
