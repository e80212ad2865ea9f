package mcptest

import (
	"bufio"
	"context"
	"io"
	"testing"
	"time"

	"github.com/buildguard/buildguard/internal/testsupport/lockedbuf"
)

// Session is a live server on pipes: the test writes request lines and
// reads response lines. NewSession makes the pipes and the log buffer the
// server is built with; Serve starts the server on them until the test
// ends.
type Session struct {
	Logs *lockedbuf.Buffer // what the server logs, when it is built with TestLogger(Logs)

	t      testing.TB
	inR    *io.PipeReader
	in     *io.PipeWriter
	outR   *io.PipeReader
	outW   *io.PipeWriter
	out    *bufio.Reader
	served chan error
}

// NewSession makes a session's pipes and log buffer.
func NewSession(t testing.TB) *Session {
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	return &Session{Logs: &lockedbuf.Buffer{}, t: t, inR: inR, in: inW, outR: outR, outW: outW,
		out: bufio.NewReader(outR), served: make(chan error, 1)}
}

// Serve runs serve (a server's ServeStdio) on the session's pipes; at the
// end of the test it ends stdin, and serve must return within 10 s.
func (s *Session) Serve(serve ServeFunc) {
	go func() {
		err := serve(context.Background(), s.inR, s.outW)
		s.outW.Close()
		s.served <- err
	}()
	s.t.Cleanup(func() {
		s.in.Close()
		go io.Copy(io.Discard, s.outR) // let a pending write finish
		select {
		case <-s.served:
		case <-time.After(10 * time.Second):
			s.t.Error("server did not stop within 10 s of EOF")
		}
	})
}

// Send writes one request line.
func (s *Session) Send(line string) {
	s.t.Helper()
	if _, err := io.WriteString(s.in, line+"\n"); err != nil {
		s.t.Fatalf("writing %s: %v", line, err)
	}
}

// Recv reads one response line (bounded by 10 s).
func (s *Session) Recv() string {
	s.t.Helper()
	type res struct {
		line string
		err  error
	}
	ch := make(chan res, 1)
	go func() {
		l, err := s.out.ReadString('\n')
		ch <- res{l, err}
	}()
	select {
	case r := <-ch:
		if r.err != nil {
			s.t.Fatalf("reading a response: %v (got %q)", r.err, r.line)
		}
		return r.line[:len(r.line)-1]
	case <-time.After(10 * time.Second):
		s.t.Fatal("no response within 10 s")
		return ""
	}
}

// CloseAndRest ends stdin and returns every remaining output line; the
// server must return within 10 s, without an error.
func (s *Session) CloseAndRest() []string {
	s.t.Helper()
	s.in.Close()
	linesCh := make(chan []string, 1)
	go func() {
		var lines []string
		for {
			l, err := s.out.ReadString('\n')
			if l != "" {
				lines = append(lines, l)
			}
			if err != nil {
				linesCh <- lines
				return
			}
		}
	}()
	select {
	case lines := <-linesCh:
		err := <-s.served
		if err != nil {
			s.t.Errorf("Serve: %v", err)
		}
		s.served <- err
		return lines
	case <-time.After(10 * time.Second):
		s.t.Fatal("server did not stop within 10 s of EOF")
		return nil
	}
}
