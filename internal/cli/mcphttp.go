package cli

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"net"
	"net/url"
	"os"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"

	"github.com/hashicorp/go-hclog"

	"github.com/buildguard/buildguard/mcp"
	"github.com/buildguard/buildguard/mcp/httpfront"
)

// The startup failures of `buildguard mcp --http` (docs/decisions.md#D14); like the
// other startup failures each is printed with the usage, exit 2.
var (
	errMCPHTTPAddr    = errors.New("--http ADDR must be a loopback address with a port: 127.0.0.1:PORT, [::1]:PORT or localhost:PORT (port 0 picks a free one)")
	errMCPHTTPOnly    = errors.New("--token-file and --url-file need --http ADDR")
	errMCPTokenFormat = errors.New("--token-file must hold one token of 16 to 4096 printable ASCII characters without spaces")
)

// Token limits: a generated token has 256 random bits; one from a file has
// at least 16 characters.
const (
	tokenBytes    = 32
	minTokenChars = 16
	maxTokenChars = 4096
)

// mcpHTTPOptions are the options of the HTTP form; addr "" means stdio.
type mcpHTTPOptions struct {
	addr, tokenFile, urlFile string
}

// splitHTTPArgs takes --http, --token-file and --url-file (each at most
// once, with a value) out of args and returns the rest for parseMCPArgs.
func splitHTTPArgs(args []string) (rest []string, opts mcpHTTPOptions, err error) {
	seen := map[string]bool{}
	for i := 0; i < len(args); i++ {
		var dst *string
		switch args[i] {
		case "--http":
			dst = &opts.addr
		case "--token-file":
			dst = &opts.tokenFile
		case "--url-file":
			dst = &opts.urlFile
		default:
			rest = append(rest, args[i])
			continue
		}
		flag := args[i]
		if seen[flag] || i+1 >= len(args) || strings.HasPrefix(args[i+1], "--") {
			return nil, opts, errMCPMissingValue(flag)
		}
		seen[flag] = true
		i++
		if flag != "--http" && !validStartupPath(args[i]) {
			return nil, opts, errMCPBadPath
		}
		*dst = args[i]
	}
	if !seen["--http"] && (seen["--token-file"] || seen["--url-file"]) {
		return nil, opts, errMCPHTTPOnly
	}
	if seen["--http"] {
		if _, _, err := loopbackListenAddr(opts.addr); err != nil {
			return nil, opts, err
		}
	}
	return rest, opts, nil
}

// loopbackListenAddr checks ADDR (docs/decisions.md#D14) and returns the address to listen on
// and the host name the URL carries (localhost listens on 127.0.0.1).
func loopbackListenAddr(addr string) (listen, urlHost string, err error) {
	host, port, err := net.SplitHostPort(addr)
	if err != nil || !httpfront.IsLoopbackName(host) {
		return "", "", errMCPHTTPAddr
	}
	if n, err := strconv.Atoi(port); err != nil || n < 0 || n > 65535 || strings.TrimLeft(port, "0123456789") != "" {
		return "", "", errMCPHTTPAddr
	}
	listenHost := host
	if strings.EqualFold(host, "localhost") {
		listenHost, host = "127.0.0.1", "localhost"
	}
	return net.JoinHostPort(listenHost, port), host, nil
}

// readToken returns the token of --token-file (trimmed of surrounding
// whitespace), or a fresh random one when file is "".
func readToken(file string) (string, error) {
	if file == "" {
		b := make([]byte, tokenBytes)
		if _, err := rand.Read(b); err != nil {
			return "", fmt.Errorf("generating the token: %w", err)
		}
		return base64.RawURLEncoding.EncodeToString(b), nil
	}
	f, err := os.Open(file)
	if err != nil {
		return "", fmt.Errorf("%w: cannot read %s: %v", errMCPTokenFormat, file, err)
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, maxTokenChars+2))
	if err != nil {
		return "", fmt.Errorf("%w: cannot read %s: %v", errMCPTokenFormat, file, err)
	}
	tok := strings.TrimSpace(string(b))
	if len(tok) < minTokenChars || len(tok) > maxTokenChars || strings.IndexFunc(tok, func(r rune) bool { return r <= ' ' || r > '~' }) >= 0 {
		return "", fmt.Errorf("%w: %s", errMCPTokenFormat, file)
	}
	return tok, nil
}

// writeURLFile writes url and a newline to file with mode 0600, replacing
// it atomically.
func writeURLFile(file, url string) error {
	dir := filepath.Dir(file)
	tmp, err := os.CreateTemp(dir, "."+filepath.Base(file)+".*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	if err := tmp.Chmod(0o600); err != nil {
		tmp.Close()
		return err
	}
	if _, err := tmp.WriteString(url + "\n"); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), file)
}

// serveMCPHTTP runs `buildguard mcp --http ADDR`: it listens, prints the URL
// (with the token) as one stderr line and into --url-file, and serves until
// SIGINT or SIGTERM; then in-flight calls are cancelled and it exits 0
// within 5 s.
func serveMCPHTTP(srv *mcp.Server, opts mcpHTTPOptions, token string, stderr io.Writer, log hclog.Logger) ExitCode {
	listen, urlHost, err := loopbackListenAddr(opts.addr)
	if err != nil { // checked at parse time
		fmt.Fprintf(stderr, "%v\n%s", err, mcpUsage)
		return ExitUsage
	}
	ln, err := net.Listen("tcp", listen)
	if err != nil {
		fmt.Fprintf(stderr, "buildguard mcp: cannot listen on %s: %v\n", opts.addr, err)
		return ExitFailure
	}
	_, port, _ := net.SplitHostPort(ln.Addr().String())
	u := (&url.URL{Scheme: "http", Host: net.JoinHostPort(urlHost, port), Path: httpfront.HTTPPath, RawQuery: url.Values{httpfront.TokenParam: {token}}.Encode()}).String()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if opts.urlFile != "" {
		if err := writeURLFile(opts.urlFile, u); err != nil {
			ln.Close()
			fmt.Fprintf(stderr, "buildguard mcp: cannot write --url-file %s: %v\n", opts.urlFile, err)
			return ExitFailure
		}
	}
	fmt.Fprintf(stderr, "buildguard mcp: serving MCP over streamable HTTP at %s\n", u)
	if err := srv.ServeStreamableHTTP(ctx, ln, token); err != nil {
		log.Error("MCP over HTTP failed", "error", err)
		return ExitFailure
	}
	return ExitOK
}
