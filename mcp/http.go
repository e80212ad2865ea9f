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
		SDK:       s.sdk,
		Calls:     s.httpCalls,
		Token:     token,
		Logger:    s.log.Named("http"),
		SDKLogger: newSlogLogger(s.log.Named("http").Named("sdk")),
	})
}

// ServeStreamableHTTP serves s over streamable HTTP on ln, accepting token,
// until ctx is done; then it cancels the calls in flight, stops accepting
// and waits at most httpfront.ShutdownTimeout for their answers before
// closing every connection. It returns nil after such a stop.
func (s *Server) ServeStreamableHTTP(ctx context.Context, ln net.Listener, token string) error {
	if token == "" {
		return errors.New("serving MCP over HTTP: the token is empty")
	}
	return httpfront.Serve(ctx, ln, s.HTTPHandler(token))
}
