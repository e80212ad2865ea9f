package mcp

import (
	"context"
	"errors"
	"net"

	"github.com/buildguard/buildguard/mcp/httpfront"
)

// HTTPHandler returns the streamable HTTP front of s (package httpfront),
// accepting token, which must not be empty.
func (s *Server) HTTPHandler(token string) *httpfront.Handler {
	return httpfront.New(httpfront.Config{
		SDK:        s.sdk,
		Calls:      s.httpCalls,
		Token:      token,
		Logger:     s.log.Named("http"),
		SDKLogger:  newSlogLogger(s.log.Named("http").Named("sdk")),
		Versions:   sdkVersions(),
		Tasks:      s.tasks,
		ServerInfo: s.info,
	})
}

// ServeStreamableHTTP serves s over streamable HTTP on ln, accepting token,
// until ctx is done; then it cancels the calls in flight and the safe builds
// running as tasks, stops accepting and waits at most
// httpfront.ShutdownTimeout for their answers before closing every
// connection. It returns nil after such a stop.
func (s *Server) ServeStreamableHTTP(ctx context.Context, ln net.Listener, token string) error {
	if token == "" {
		return errors.New("serving MCP over HTTP: the token is empty")
	}
	// The stop also ends the safe builds running as tasks, beside the wait
	// for the calls in flight (docs/decisions.md#D17).
	serveCtx, stopServing := context.WithCancel(ctx)
	defer stopServing()
	closed := make(chan struct{})
	go func() {
		defer close(closed)
		<-serveCtx.Done()
		cctx, cancel := context.WithTimeout(context.Background(), httpfront.ShutdownTimeout)
		defer cancel()
		if err := s.Close(cctx); err != nil {
			s.log.Warn("exiting with a safe build task still stopping", "error", err)
		}
	}()
	err := httpfront.Serve(serveCtx, ln, s.HTTPHandler(token))
	stopServing()
	<-closed
	return err
}
