//go:build unix

package clients

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"time"

	"github.com/buildguard/buildguard/internal/testsupport/lockedbuf"

	sdkmcp "github.com/modelcontextprotocol/go-sdk/mcp"
)

// Bounds of an HTTP lane's server process.
const (
	httpStartTimeout = 15 * time.Second
	// httpStopTimeout is the promise of docs/http.md#1: exit within 5 s of
	// SIGTERM.
	httpStopTimeout = 5 * time.Second
)

// urlLine is the one stderr line of `buildguard mcp --http` (docs/http.md#1).
var urlLine = regexp.MustCompile(`^buildguard mcp: serving MCP over streamable HTTP at (http://127\.0\.0\.1:[0-9]+/mcp\?token=[A-Za-z0-9_-]+)\n`)

// HTTPServer is a `buildguard mcp --http 127.0.0.1:0` process of a lane.
type HTTPServer struct {
	// URL is the endpoint with the token, from --url-file.
	URL    string
	cmd    *exec.Cmd
	stderr *lockedbuf.Buffer
	exited chan struct{}
	err    error
}

// StartHTTPServer starts s with --http 127.0.0.1:0 and --url-file, and waits
// (at most 15 s) for the URL in the file and a first stderr line, which must
// be the URL line with the same URL.
func StartHTTPServer(ctx context.Context, s ServerCommand) (*HTTPServer, error) {
	dir, err := os.MkdirTemp("", "buildguard-http-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	urlFile := filepath.Join(dir, "url")
	s.Args = append(append([]string{}, s.Args...), "--http", "127.0.0.1:0", "--url-file", urlFile)
	h := &HTTPServer{stderr: &lockedbuf.Buffer{}, exited: make(chan struct{})}
	h.cmd = s.cmd(h.stderr)
	if err := h.cmd.Start(); err != nil {
		return nil, fmt.Errorf("starting buildguard mcp --http: %w", err)
	}
	go func() { h.err = h.cmd.Wait(); close(h.exited) }()
	deadline := time.NewTimer(httpStartTimeout)
	defer deadline.Stop()
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	// The server writes --url-file first and its stderr line after it, and
	// that line reaches h.stderr through a pipe and exec's copying
	// goroutine: the start is complete once both are there.
	for {
		if b, err := os.ReadFile(urlFile); err == nil && strings.HasSuffix(string(b), "\n") && strings.Contains(h.stderr.String(), "\n") {
			h.URL = strings.TrimSpace(string(b))
			break
		}
		select {
		case <-h.exited:
			return nil, fmt.Errorf("buildguard mcp --http exited before serving (%v): %s", h.err, h.stderr.String())
		case <-deadline.C:
			h.kill()
			return nil, fmt.Errorf("buildguard mcp --http wrote no URL file and URL line within %s: %q", httpStartTimeout, h.stderr.String())
		case <-ctx.Done():
			h.kill()
			return nil, ctx.Err()
		case <-tick.C:
		}
	}
	if m := urlLine.FindStringSubmatch(h.stderr.String()); m == nil || m[1] != h.URL {
		h.kill()
		return nil, fmt.Errorf("stderr does not start with the URL line of --url-file %s: %q", h.URL, h.stderr.String())
	}
	return h, nil
}

// Stderr is what the server wrote to stderr after its URL line (nothing in
// a normal session).
func (h *HTTPServer) Stderr() string {
	return urlLine.ReplaceAllString(h.stderr.String(), "")
}

// Stop sends SIGTERM and requires exit 0 within 5 s.
func (h *HTTPServer) Stop() error {
	_ = h.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-h.exited:
		if h.err != nil {
			return fmt.Errorf("buildguard mcp --http after SIGTERM: %w", h.err)
		}
		return nil
	case <-time.After(httpStopTimeout):
		h.kill()
		return fmt.Errorf("buildguard mcp --http still ran %s after SIGTERM", httpStopTimeout)
	}
}

func (h *HTTPServer) kill() {
	_ = h.cmd.Process.Kill()
	<-h.exited
}

// goSDKHTTPClient is the go-sdk client over StreamableClientTransport to
// its own server process.
type goSDKHTTPClient struct {
	*GoSDKClient
	server *HTTPServer
}

// DialGoSDKHTTP starts `buildguard mcp --http` and connects go-sdk's
// streamable HTTP client to its URL (token in the query, as printed),
// asking for version (VersionDefault: the SDK's default).
func DialGoSDKHTTP(ctx context.Context, lane string, s ServerCommand, version string) (Client, error) {
	srv, err := StartHTTPServer(ctx, s)
	if err != nil {
		return nil, err
	}
	c, client := newGoSDKClient(lane)
	ctx, cancel := context.WithTimeout(ctx, CallTimeout)
	defer cancel()
	var opts *sdkmcp.ClientSessionOptions
	if version != VersionDefault {
		opts = &sdkmcp.ClientSessionOptions{ProtocolVersion: version}
	}
	session, err := client.Connect(ctx, &sdkmcp.StreamableClientTransport{Endpoint: srv.URL, DisableStandaloneSSE: true}, opts)
	if err != nil {
		srv.kill()
		return nil, fmt.Errorf("connecting go-sdk streamable HTTP client (%s): %w", lane, err)
	}
	c.session, c.stderr = session, srv.stderr
	return &goSDKHTTPClient{GoSDKClient: c, server: srv}, nil
}

// ServerStderr implements the runner's stderr check: the URL line is the
// only one allowed.
func (c *goSDKHTTPClient) ServerStderr() string { return c.server.Stderr() }

// Close ends the session, then stops the server (exit 0 within 5 s).
func (c *goSDKHTTPClient) Close() error {
	return errors.Join(c.session.Close(), c.server.Stop())
}
