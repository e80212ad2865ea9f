package mcp

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"sync"
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

// closeAndRest ends stdin and returns every remaining output line; Serve
// must return within 10 s.
func (s *pipeSession) closeAndRest() []string {
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

// field decodes one member of a response line.
func field(t *testing.T, line, name string) string {
	t.Helper()
	var m map[string]json.RawMessage
	if err := json.Unmarshal([]byte(line), &m); err != nil {
		t.Fatalf("response %q: %v", line, err)
	}
	return string(m[name])
}

// watchedFile is a pipe's read end that reports when a read began and when
// a read ended because its deadline passed.
type watchedFile struct {
	*os.File
	reading, interrupted chan struct{}
	readOnce, intOnce    sync.Once
}

func (w *watchedFile) Read(p []byte) (int, error) {
	w.readOnce.Do(func() { close(w.reading) })
	n, err := w.File.Read(p)
	if errors.Is(err, os.ErrDeadlineExceeded) {
		w.intOnce.Do(func() { close(w.interrupted) })
	}
	return n, err
}

// Cancelling Serve interrupts its read of an input that supports deadlines
// (a pipe here), so nothing stays blocked on stdin, and input written later
// is left for the input's owner.
func TestServeCancelInterruptsTheRead(t *testing.T) {
	t.Parallel()
	inR, inW, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer inR.Close()
	defer inW.Close()
	in := &watchedFile{File: inR, reading: make(chan struct{}), interrupted: make(chan struct{})}
	srv := NewServer(Config{Caller: &fakeCaller{}, Version: "test", Logger: testLogger(&lockedbuf.Buffer{})})
	ctx, cancel := context.WithCancel(context.Background())
	served := make(chan error, 1)
	go func() { served <- srv.ServeStdio(ctx, in, io.Discard) }()
	within := func(ch <-chan struct{}, what string) {
		t.Helper()
		select {
		case <-ch:
		case <-time.After(10 * time.Second):
			t.Fatal(what)
		}
	}
	within(in.reading, "Serve did not read its input")
	cancel()
	select {
	case err := <-served:
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("Serve = %v, want context.Canceled", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Serve did not return within 10 s of the cancellation")
	}
	within(in.interrupted, "the read of the input was not interrupted")

	// The deadline is cleared once the reader stopped; what comes next is
	// the owner's.
	const later = "later\n"
	if _, err := io.WriteString(inW, later); err != nil {
		t.Fatal(err)
	}
	got := make(chan string, 1)
	go func() {
		buf := make([]byte, len(later))
		deadline := time.Now().Add(10 * time.Second)
		for {
			n, err := io.ReadFull(inR, buf)
			if errors.Is(err, os.ErrDeadlineExceeded) && n == 0 && time.Now().Before(deadline) {
				time.Sleep(10 * time.Millisecond) // until the reader cleared its deadline
				continue
			}
			got <- fmt.Sprintf("%q %v", buf[:n], err)
			return
		}
	}()
	select {
	case g := <-got:
		if want := fmt.Sprintf("%q <nil>", later); g != want {
			t.Errorf("reading the input after Serve: %s, want %s", g, want)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the input written after Serve returned could not be read within 10 s: the server consumed it or left its deadline set")
	}
}
