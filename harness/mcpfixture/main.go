// Command mcpfixture is the MCP conformance suite's fixture server built on
// buildguard's own MCP machinery: its streamable HTTP front (mcp/httpfront),
// its version handling and its task store (service/mcptask), with the
// fixture tools, resources and prompts the suite's scenarios call
// registered instead of buildguard's tools, and no token. It exists to
// prove that machinery with the official suite (docs/http.md#6.2); it is
// never part of the release. With --stateful it keeps sessions on go-sdk's
// own handler instead of the front, which serves every request on its own.
//
//	go run ./harness/mcpfixture --url-file FILE [--stateful]
//
// serves on a random loopback port and writes the endpoint URL and a newline
// to FILE once it listens. SIGINT or SIGTERM stops it: running tasks are
// cancelled, then it exits 0.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"
	"time"
)

func main() {
	os.Exit(run())
}

func run() int {
	fs := flag.NewFlagSet("mcpfixture", flag.ContinueOnError)
	urlFile := fs.String("url-file", "", "write the endpoint URL to this file once serving")
	addr := fs.String("addr", "127.0.0.1:0", "loopback address to listen on")
	stateful := fs.Bool("stateful", false, "keep sessions (Mcp-Session-Id), for the 2025-11-25 scenarios that need a server-to-client stream")
	if err := fs.Parse(os.Args[1:]); err != nil {
		return 2
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	if err := serve(ctx, *addr, *urlFile, *stateful); err != nil {
		fmt.Fprintln(os.Stderr, "mcpfixture:", err)
		return 1
	}
	return 0
}

func serve(ctx context.Context, addr, urlFile string, stateful bool) error {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return err
	}
	f := newFixture()
	srv := &http.Server{Handler: f.handler(stateful), ReadHeaderTimeout: 10 * time.Second}
	url := "http://" + ln.Addr().String() + "/mcp"
	if urlFile != "" {
		if err := writeURL(urlFile, url); err != nil {
			_ = ln.Close()
			return err
		}
	}
	fmt.Fprintln(os.Stderr, "mcpfixture: serving at", url)
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_ = f.close(sctx)
	if err := srv.Shutdown(sctx); err != nil && !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}

// writeURL writes url to path atomically, mode 0600.
func writeURL(path, url string) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), ".mcpfixture-url-*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.WriteString(url + "\n"); err != nil {
		_ = tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), path)
}
