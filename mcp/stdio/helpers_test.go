package stdio_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/hashicorp/go-hclog"

	"github.com/buildguard/buildguard/internal/testsupport/lockedbuf"
	"github.com/buildguard/buildguard/mcp"
)

// The tests of this file's package drive the stdio transport as the server
// (package mcp) assembles it: these helpers are the mcp package's own test
// helpers, copied for an external test package.

const (
	initLine  = `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18"}}`
	batchCall = `{"jsonrpc":"2.0","id":%s,"method":"tools/call","params":{"name":"reclazz_verify_batch","arguments":{}}}`
	pingLine  = `{"jsonrpc":"2.0","id":%s,"method":"ping"}`
)

// sha is the SHA-256 the verification calls ask for.
const sha = "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"

// testLogger logs at warn level (the default of `buildguard mcp`) into w.
func testLogger(w io.Writer) hclog.Logger {
	return hclog.New(&hclog.LoggerOptions{Name: "mcp", Level: hclog.Warn, Output: w, Color: hclog.ColorOff})
}

// assertOnlyJSONRPC checks that out is nothing but JSON-RPC responses: one
// compact object per line with jsonrpc "2.0", an id member, and exactly one
// of result or error; an error never has code 0 or data.
func assertOnlyJSONRPC(t *testing.T, out []byte) {
	t.Helper()
	if len(out) == 0 {
		return
	}
	if out[len(out)-1] != '\n' {
		t.Errorf("output does not end with a newline: %q", out)
	}
	if !utf8.Valid(out) {
		t.Errorf("output is not valid UTF-8: %q", out)
	}
	for _, line := range bytes.Split(bytes.TrimSuffix(out, []byte("\n")), []byte("\n")) {
		var compact bytes.Buffer
		if err := json.Compact(&compact, line); err != nil || !bytes.Equal(compact.Bytes(), line) {
			t.Errorf("not one compact JSON value: %q", line)
			continue
		}
		var m map[string]json.RawMessage
		if err := json.Unmarshal(line, &m); err != nil {
			t.Errorf("not a JSON object: %q", line)
			continue
		}
		_, hasID := m["id"]
		_, hasResult := m["result"]
		errRaw, hasError := m["error"]
		if string(m["jsonrpc"]) != `"2.0"` || !hasID || hasResult == hasError || len(m) != 3 {
			t.Errorf("not a JSON-RPC response: %s", line)
		}
		if !bytes.HasPrefix(line, []byte(`{"jsonrpc":"2.0","id":`)) {
			t.Errorf("keys not in jsonrpc, id order: %s", line)
		}
		if hasError {
			var e map[string]json.RawMessage
			_ = json.Unmarshal(errRaw, &e)
			// Only -32022 (a 2026-07-28 request's unknown version) has data:
			// the versions served.
			withData := string(e["code"]) == "-32022" && e["data"] != nil
			if string(e["code"]) == "0" || (e["data"] != nil && !withData) || len(e) != map[bool]int{false: 2, true: 3}[withData] {
				t.Errorf("error object must be {code≠0, message} (and data only for -32022): %s", line)
			}
		}
	}
}

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
func startSession(t *testing.T, caller mcp.Caller, drain time.Duration) *pipeSession {
	t.Helper()
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	s := &pipeSession{t: t, in: inW, out: bufio.NewReader(outR), outW: outW, logs: &lockedbuf.Buffer{}, served: make(chan error, 1)}
	srv := mcp.NewServer(mcp.Config{Caller: caller, Version: "test", Logger: testLogger(s.logs), DrainTimeout: drain})
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
