package agentproto

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"strconv"
	"sync"
	"time"
)

// Dialer connects to an agent. The zero value is ready to use.
type Dialer struct {
	// ConnectTimeout bounds the TCP connect on each address tried. Zero means
	// only the context bounds it.
	ConnectTimeout time.Duration
	// HandshakeTimeout, when non-zero, gives the CONNECTED handshake its own
	// deadline of this length, counted from the moment the connection is up
	// (a session's connect and handshake are bounded separately); ctx still
	// bounds it too. Zero means only ctx bounds the handshake.
	HandshakeTimeout time.Duration
}

// Dial connects with the zero Dialer.
func Dial(ctx context.Context, port int) (*Conn, error) {
	return Dialer{}.Dial(ctx, port)
}

// Dial connects to 127.0.0.1:port — or, when that is refused, to [::1]:port,
// where an agent in a JVM that prefers IPv6 listens (docs/decisions.md#D6) — and reads the
// agent's CONNECTED handshake within ctx. Nothing but loopback is dialled.
//
// The handshake rule is the strict one for every caller: a JSON object with
// level "CONNECTED", a non-blank string "agent" and "version" the JSON number
// 1. The client sends nothing before it. Errors wrap ErrUnreachable,
// ErrNoHandshake or ErrInvalidHandshake.
func (d Dialer) Dial(ctx context.Context, port int) (*Conn, error) {
	if port < 1 || port > 65535 {
		return nil, fmt.Errorf("%w: %d", ErrInvalidPort, port)
	}
	nc, err := d.connect(ctx, port)
	if err != nil {
		return nil, &wireError{msg: fmt.Sprintf("%s on 127.0.0.1:%d", ErrUnreachable, port), errs: []error{ErrUnreachable, err}}
	}
	c := &Conn{nc: nc, br: bufio.NewReaderSize(nc, 4096), port: port}
	hctx := ctx
	if d.HandshakeTimeout > 0 {
		var cancel context.CancelFunc
		hctx, cancel = context.WithTimeout(ctx, d.HandshakeTimeout)
		defer cancel()
	}
	if err := c.handshake(hctx); err != nil {
		c.Close()
		return nil, err
	}
	return c, nil
}

func (d Dialer) connect(ctx context.Context, port int) (net.Conn, error) {
	// No keep-alive: the agent is on this machine, so a connection cannot be
	// left half-open by a network, and its probes would cost four system calls.
	nd := net.Dialer{Timeout: d.ConnectTimeout, KeepAlive: -1}
	p := strconv.Itoa(port)
	nc, err := nd.DialContext(ctx, "tcp4", net.JoinHostPort("127.0.0.1", p))
	if err == nil || !refused(err) {
		return nc, err
	}
	if nc6, err6 := nd.DialContext(ctx, "tcp6", net.JoinHostPort("::1", p)); err6 == nil {
		return nc6, nil
	}
	return nil, err
}

// Conn is one connection to an agent, after a valid handshake. A Conn serves
// one operation (or one build session) at a time: its methods must not be
// called concurrently. Each method is bounded by its ctx: a deadline that
// passes ends it with ErrTimeout (ErrNoInfo for broadcast queries), a
// cancellation with an error wrapping context.Canceled, after which the
// caller should Close. The write side stays open until Close, because the
// agent drops queued replies when a client half-closes.
type Conn struct {
	nc    net.Conn
	br    *bufio.Reader
	port  int
	agent string

	partial []byte // bytes of an unfinished line kept across read errors

	closeOnce sync.Once
	closeErr  error
}

// Agent returns the agent's release string from its CONNECTED line.
func (c *Conn) Agent() string { return c.agent }

// Port returns the port this connection was dialled on.
func (c *Conn) Port() int { return c.port }

// Close closes the connection. It is safe to call more than once.
func (c *Conn) Close() error {
	c.closeOnce.Do(func() { c.closeErr = c.nc.Close() })
	return c.closeErr
}

func (c *Conn) handshake(ctx context.Context) error {
	stop := c.bind(ctx)
	defer stop()
	line, err := c.readLine()
	switch {
	case errors.Is(err, ErrTooLong):
		return &wireError{msg: ErrInvalidHandshake.Error(), errs: []error{ErrInvalidHandshake, err}}
	case err != nil:
		return &wireError{msg: ErrNoHandshake.Error(), errs: []error{ErrNoHandshake, c.cause(ctx, err)}}
	}
	agent, err := parseHandshake(line)
	if err != nil {
		return &wireError{msg: ErrInvalidHandshake.Error(), errs: []error{ErrInvalidHandshake, err}}
	}
	c.agent = agent
	return nil
}

// bind applies ctx to the socket: its deadline becomes the socket deadline,
// and a cancellation interrupts any blocked read or write at once. The
// returned function undoes both.
func (c *Conn) bind(ctx context.Context) (stop func()) {
	if dl, ok := ctx.Deadline(); ok {
		c.nc.SetDeadline(dl)
	} else {
		c.nc.SetDeadline(time.Time{})
	}
	interrupted := make(chan struct{})
	unhook := context.AfterFunc(ctx, func() {
		c.nc.SetDeadline(time.Unix(1, 0))
		close(interrupted)
	})
	return func() {
		if !unhook() {
			// The interruption already started: let it finish, so it cannot
			// land on the next operation's deadline.
			<-interrupted
		}
		c.nc.SetDeadline(time.Time{})
	}
}

// cause turns a read or write failure into what the caller should see: the
// context's own error when it ended, otherwise err.
func (c *Conn) cause(ctx context.Context, err error) error {
	if ctxErr := ctx.Err(); ctxErr != nil && isTimeout(err) {
		if errors.Is(ctxErr, context.Canceled) {
			return ctxErr
		}
		return os.ErrDeadlineExceeded
	}
	return err
}

func isTimeout(err error) bool {
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout()
}

// send writes one command line after checking it (CheckCommand). Nothing is
// written once ctx is cancelled: bind's interrupt runs asynchronously, so
// without this check a command could still go out after the cancellation
// (a cancelled verify_batch must write no further VERIFY).
func (c *Conn) send(ctx context.Context, line string) error {
	if err := CheckCommand(line); err != nil {
		return err
	}
	if errors.Is(ctx.Err(), context.Canceled) {
		return ctx.Err()
	}
	if _, err := c.nc.Write([]byte(line + "\n")); err != nil {
		err = c.cause(ctx, err)
		if errors.Is(err, context.Canceled) {
			return err
		}
		return &wireError{msg: ErrIO.Error(), errs: []error{ErrIO, err}}
	}
	return nil
}

// readLine returns the next line without its terminator (a trailing \r is
// dropped). A line of MaxReplyChars UTF-16 units or more fails with
// ErrTooLong without being buffered past the limit.
func (c *Conn) readLine() ([]byte, error) {
	// A UTF-8 sequence of n bytes is at least n/3 UTF-16 units, so past this
	// many bytes the line is too long whatever it holds.
	line, err := c.readLineBytes(3 * MaxReplyChars)
	if err == nil && UTF16Len(string(line)) >= MaxReplyChars {
		return nil, ErrTooLong
	}
	return line, err
}

// readBroadcastLine is readLine for the lines of a broadcast query, which
// are bounded by MaxBroadcastLineBytes instead.
func (c *Conn) readBroadcastLine() ([]byte, error) {
	return c.readLineBytes(MaxBroadcastLineBytes)
}

// readLineBytes returns the next line without its terminator; a line longer
// than maxBytes fails with ErrTooLong without being buffered past the limit.
func (c *Conn) readLineBytes(maxBytes int) ([]byte, error) {
	for {
		chunk, err := c.br.ReadSlice('\n')
		c.partial = append(c.partial, chunk...)
		if len(c.partial) > maxBytes+2 {
			c.partial = nil
			return nil, ErrTooLong
		}
		switch {
		case err == nil:
			line := bytes.TrimSuffix(bytes.TrimSuffix(c.partial, []byte("\n")), []byte("\r"))
			c.partial = nil
			if len(line) > maxBytes {
				return nil, ErrTooLong
			}
			return line, nil
		case errors.Is(err, bufio.ErrBufferFull):
			continue
		default:
			return nil, err
		}
	}
}

// wireError carries a contract reason text while wrapping both the sentinel
// it stands for and the underlying cause, for errors.Is and logs.
type wireError struct {
	msg  string
	errs []error
}

func (e *wireError) Error() string   { return e.msg }
func (e *wireError) Unwrap() []error { return e.errs }

// Cause returns the underlying cause of an agentproto error for logging, or
// nil when there is none beyond the reason text.
func Cause(err error) error {
	var we *wireError
	if errors.As(err, &we) && len(we.errs) > 1 {
		return we.errs[len(we.errs)-1]
	}
	return nil
}
