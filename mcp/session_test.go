package mcp

import (
	"bufio"
	"context"
	"io"
	"testing"
	"time"

	"github.com/buildguard/buildguard/internal/testsupport/lockedbuf"
)

// pipeSession is a live server on pipes: the test writes request lines and
// reads response lines. Close ends stdin and waits for Serve to return.
type pipeSession struct {
	t      *testing.T
	in     *io.PipeWriter
	out    *bufio.Reader
	outW   *io.PipeWriter
	logs   *lockedbuf.Buffer
	served chan error
}

// startSession serves caller over pipes until the test ends.
func startSession(t *testing.T, caller Caller, drain time.Duration) *pipeSession {
	t.Helper()
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	s := &pipeSession{t: t, in: inW, out: bufio.NewReader(outR), outW: outW, logs: &lockedbuf.Buffer{}, served: make(chan error, 1)}
	srv := NewServer(Config{Caller: caller, Version: "test", Logger: testLogger(s.logs), DrainTimeout: drain})
	go func() {
		err := srv.ServeStdio(context.Background(), inR, outW)
		outW.Close()
		s.served <- err
	}()
	t.Cleanup(func() {
		inW.Close()
		go io.Copy(io.Discard, outR) // let a pending write finish
		select {
		case <-s.served:
		case <-time.After(10 * time.Second):
			t.Error("server did not stop within 10 s of EOF")
		}
	})
	return s
}

func (s *pipeSession) send(line string) {
	s.t.Helper()
	if _, err := io.WriteString(s.in, line+"\n"); err != nil {
		s.t.Fatalf("writing %s: %v", line, err)
	}
}

// recv reads one response line (bounded by 10 s).
func (s *pipeSession) recv() string {
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
