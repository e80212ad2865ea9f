package mcp

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"fmt"
	"io"
	"net"
	"net/url"
	"os"
	"os/signal"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/buildguard/buildguard/internal/boundedfile"
	"github.com/buildguard/buildguard/mcp/httpfront"
	"github.com/buildguard/buildguard/service/tools"
)

// Life is the server a front asks for: the tool service's settings and,
// for the HTTP form, where it listens and the files it reads and writes
// (docs/decisions.md#D14).
type Life struct {
	Tools tools.Deps
	HTTP  HTTPLife
}

// HTTPLife is the HTTP form of a server's life; Listen "" means stdio.
type HTTPLife struct {
	Listen  string // the loopback address to listen on
	URLHost string // the host name the URL carries
	// TokenFile holds the token (boundedfile.ReadToken); "" means a fresh
	// random one.
	TokenFile string
	// URLFile receives the URL (boundedfile.WriteURLFile); "" means none.
	URLFile string
}

// Process is what a server takes from the process that runs it: its
// streams, its log, the signals that stop it and the binary's version.
type Process struct {
	Stdin  io.Reader // the stdio form's input
	Stdout io.Writer // the stdio form's output
	// Announce receives the HTTP form's line with the URL, which starts
	// with Name.
	Announce io.Writer
	Name     string
	Log      hclog.Logger
	Stop     []os.Signal
	Version  string
}

// Stage is how far a server's life went.
type Stage int

// The stages an Ending names.
const (
	// Refused: a start-up file was refused (Ending.File), before anything
	// listened; Err is a *boundedfile.Refusal.
	Refused Stage = iota + 1
	// NotListening: the HTTP form could not listen; Err says why.
	NotListening
	// NoURLFile: the URL file was not written, and the server stopped
	// before serving; Err is a *boundedfile.Refusal for a refused path.
	NoURLFile
	// Served: the server served until its input ended, a stop signal
	// (Ending.Signal), or a failure (Err), and then stopped its builds.
	Served
)

// StartFile names a file of the HTTP form that a refusal is about.
type StartFile int

// The start-up files.
const (
	TokenFile StartFile = iota + 1
	URLFile
)

// Ending is how a server's life ended, for its front to word.
type Ending struct {
	Stage  Stage
	File   StartFile // the file refused, at Refused
	Err    error
	Signal os.Signal // the stop signal that ended it, or nil
}

// Token limits: a generated token has 256 random bits; one from a file has
// at least 16 characters.
const (
	tokenBytes    = 32
	minTokenChars = 16
	maxTokenChars = 4096
)

// taskStopTimeout bounds the wait for safe builds at the end of a stdio
// server's input: those running as tasks, then the others, as for a build
// call at EOF (docs/safe-build.md#6).
const taskStopTimeout = 30 * time.Second

// Serve runs one server's life: it builds the server with its tool
// service, serves MCP over stdio until the input ends or a stop signal
// (the stdio form), or over streamable HTTP until a stop signal
// (docs/decisions.md#D14), and then ends the safe builds it ran, as Ending
// says. Logs go to p.Log, never to the protocol's stream.
//
// The HTTP form reads the token and checks the URL file's path (either
// refused before anything listens), listens, writes the URL (with the
// token) into the URL file and to p.Announce as one line, and serves; on
// its way out the URL file is removed.
func Serve(l Life, p Process) Ending {
	srv := NewServer(Config{Tools: l.Tools, Version: p.Version, Logger: p.Log})
	if l.HTTP.Listen == "" {
		return srv.serveStdio(p)
	}
	token := newToken()
	if l.HTTP.TokenFile != "" {
		var err error
		if token, err = boundedfile.ReadToken(l.HTTP.TokenFile, minTokenChars, maxTokenChars); err != nil {
			return Ending{Stage: Refused, File: TokenFile, Err: err}
		}
	}
	if l.HTTP.URLFile != "" {
		if err := boundedfile.CheckURLFile(l.HTTP.URLFile); err != nil {
			return Ending{Stage: Refused, File: URLFile, Err: err}
		}
	}
	ln, err := net.Listen("tcp", l.HTTP.Listen)
	if err != nil {
		return Ending{Stage: NotListening, Err: err}
	}
	_, port, _ := net.SplitHostPort(ln.Addr().String())
	u := (&url.URL{Scheme: "http", Host: net.JoinHostPort(l.HTTP.URLHost, port), Path: httpfront.HTTPPath, RawQuery: url.Values{httpfront.TokenParam: {token}}.Encode()}).String()
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, p.Stop...)
	defer signal.Stop(sigs)
	var written *boundedfile.URLFile
	if l.HTTP.URLFile != "" {
		if written, err = boundedfile.WriteURLFile(l.HTTP.URLFile, u); err != nil {
			ln.Close()
			return Ending{Stage: NoURLFile, Err: err}
		}
	}
	defer func() {
		if err := written.Remove(); err != nil {
			p.Log.Warn("removing the URL file failed", "error", err)
		}
	}()
	fmt.Fprintf(p.Announce, "%s: serving MCP over streamable HTTP at %s\n", p.Name, u)
	return srv.serveHTTP(ln, token, sigs, p.Log)
}

// serveStdio serves MCP over p's stdin and stdout until the input ends
// or a stop signal.
func (s *Server) serveStdio(p Process) Ending {
	// A signal ends the server as it always did, but not before a running
	// safe build was stopped and its BUILD failed confirmed: the build's
	// processes would otherwise outlive the server (docs/safe-build.md#6).
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, p.Stop...)
	defer signal.Stop(sigs)
	served := make(chan error, 1)
	go func() { served <- s.ServeStdio(context.Background(), p.Stdin, p.Stdout) }()
	select {
	case err := <-served:
		// Input ended: safe builds running as tasks end as a cancellation
		// ends them (docs/decisions.md#D17), and so do those that went on
		// without their call: no client is left to resume them
		// (docs/safe-build.md#14).
		s.closeTasks(taskStopTimeout)
		s.stopBuilds()
		if err != nil {
			p.Log.Error("MCP session failed", "error", err)
		}
		return Ending{Stage: Served, Err: err}
	case sig := <-sigs:
		p.Log.Info("stopping on a signal; a running safe build is cancelled first", "signal", sig)
		s.closeTasks(taskStopTimeout)
		s.service.Stop()
		return Ending{Stage: Served, Signal: sig}
	}
}

// serveHTTP serves MCP over streamable HTTP on ln, accepting token, until
// a signal on sigs. Then in-flight calls are cancelled and a running safe
// build is stopped (its group ended, BUILD failed acknowledged).
func (s *Server) serveHTTP(ln net.Listener, token string, sigs <-chan os.Signal, log hclog.Logger) Ending {
	ctx, stop := context.WithCancel(context.Background())
	defer stop()
	caught := make(chan os.Signal, 1)
	go func() {
		select {
		case sig := <-sigs:
			log.Info("stopping on a signal; calls in flight are cancelled", "signal", sig)
			caught <- sig
			stop()
		case <-ctx.Done():
		}
	}()
	err := s.ServeStreamableHTTP(ctx, ln, token)
	// A safe build whose call was cancelled may still be stopping its
	// group (a grace period, then SIGKILL) and waiting for BUILD failed to
	// be acknowledged, and one running as a task outlives every request:
	// the server outlives neither (docs/safe-build.md#6,
	// docs/decisions.md#D17).
	s.closeTasks(taskStopTimeout)
	s.service.Stop()
	if err != nil {
		log.Error("MCP over HTTP failed", "error", err)
		return Ending{Stage: Served, Err: err}
	}
	select {
	case sig := <-caught:
		return Ending{Stage: Served, Signal: sig}
	default:
	}
	return Ending{Stage: Served}
}

// newToken is a fresh random token of tokenBytes, URL-safe.
func newToken() string {
	b := make([]byte, tokenBytes)
	_, _ = rand.Read(b) // crypto/rand's Read never fails
	return base64.RawURLEncoding.EncodeToString(b)
}

// closeTasks cancels the safe builds that run as tasks and waits for their
// BUILD failed, at most wait.
func (s *Server) closeTasks(wait time.Duration) {
	ctx, cancel := context.WithTimeout(context.Background(), wait)
	defer cancel()
	if err := s.Close(ctx); err != nil {
		s.log.Warn("exiting with a safe build task still stopping", "error", err)
	}
}

// stopBuilds stops the tool service's safe builds, as its Stop does,
// waiting at most taskStopTimeout for them.
func (s *Server) stopBuilds() {
	stopped := make(chan struct{})
	go func() {
		s.service.Stop()
		close(stopped)
	}()
	select {
	case <-stopped:
	case <-time.After(taskStopTimeout):
		s.log.Warn("exiting with a safe build still stopping")
	}
}
