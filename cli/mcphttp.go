package cli

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net"
	"net/url"
	"os"
	"os/signal"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"

	"github.com/hashicorp/go-hclog"

	"github.com/buildguard/buildguard/internal/boundedfile"
	"github.com/buildguard/buildguard/mcp"
	"github.com/buildguard/buildguard/mcp/httpfront"
	"github.com/buildguard/buildguard/service/tools"
)

// The startup failures of `buildguard mcp --http` (docs/decisions.md#D14); like the
// other startup failures each is printed with the usage, exit 2.
var (
	errMCPTokenFormat = errors.New("--token-file must hold one token of 16 to 4096 printable ASCII characters without spaces")
	errMCPTokenOpen   = errors.New("--token-file must be readable by its owner only")
	errMCPURLFile     = errors.New("--url-file must name a regular file or a new file")
)

// Token limits: a generated token has 256 random bits; one from a file has
// at least 16 characters.
const (
	tokenBytes    = 32
	minTokenChars = 16
	maxTokenChars = 4096
)

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
	f, _, err := boundedfile.Open(file, maxTokenChars+2)
	if err != nil {
		return "", fmt.Errorf("%w: cannot read %s: %v", errMCPTokenFormat, file, err)
	}
	defer f.Close()
	if err := privateToOwner(f); err != nil {
		return "", fmt.Errorf("%w: %s %v; chmod 600 %s", errMCPTokenOpen, file, err, file)
	}
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

// checkURLFile checks the path --url-file names: nothing there yet, or a
// regular file, which the URL file replaces. Anything else — a symlink
// (even to a regular file), a directory, a named pipe, a device, a socket
// — is refused: the URL file is written and removed only as a file of its
// own, never through a link (docs/decisions.md#D23), and never replaces
// /dev/null.
func checkURLFile(file string) error {
	fi, err := os.Lstat(file)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil
	case err != nil:
		return fmt.Errorf("%w: %v", errMCPURLFile, err)
	case fi.Mode().IsRegular():
		return nil
	case fi.Mode()&fs.ModeSymlink != 0:
		to, err := os.Readlink(file)
		if err != nil {
			to = "something unreadable"
		}
		return fmt.Errorf("%w: %s is a symlink to %s, and the URL file is never written through a link", errMCPURLFile, file, to)
	}
	return fmt.Errorf("%w: %s is %s", errMCPURLFile, file, boundedfile.Describe(fi.Mode()))
}

// urlFile is a written --url-file: remove deletes it while the path still
// names the file the server created.
type urlFile struct {
	path string
	info fs.FileInfo // of the file created, taken from its descriptor
	// held keeps the file created open until remove (nil on Windows, where
	// an open file cannot be renamed), so its device and inode numbers
	// cannot pass to a file made after it is deleted: a file someone
	// puts at the path is never taken for it.
	held *os.File
}

// writeURLFile writes url and a newline to a file of its own, created new
// (O_EXCL, mode 0600) beside file, and renames it to file, replacing a
// regular file there atomically. A rename replaces what is at the path,
// never what a link there points to, so a link put there after the check
// is replaced, not followed.
func writeURLFile(file, url string) (*urlFile, error) {
	if err := checkURLFile(file); err != nil {
		return nil, err
	}
	tmp, err := os.CreateTemp(filepath.Dir(file), "."+filepath.Base(file)+".*")
	if err != nil {
		return nil, err
	}
	u := &urlFile{path: file, held: tmp}
	renamed := false
	defer func() {
		if !renamed {
			u.close()
			_ = os.Remove(tmp.Name())
		}
	}()
	if u.info, err = fillURLFile(tmp, url); err != nil {
		return nil, err
	}
	if runtime.GOOS == "windows" {
		u.close()
	}
	// Checked again just before the rename: what is there now is replaced.
	if err := checkURLFile(file); err != nil {
		return nil, fmt.Errorf("%w (it changed while the URL was written)", err)
	}
	if err := os.Rename(tmp.Name(), file); err != nil {
		return nil, err
	}
	renamed = true
	return u, nil
}

// fillURLFile writes url and a newline to f with mode 0600 and returns
// what identifies it.
func fillURLFile(f *os.File, url string) (fs.FileInfo, error) {
	if err := f.Chmod(0o600); err != nil {
		return nil, err
	}
	if _, err := f.WriteString(url + "\n"); err != nil {
		return nil, err
	}
	return f.Stat()
}

// close closes the file held, if any.
func (u *urlFile) close() {
	if u.held != nil {
		_ = u.held.Close()
		u.held = nil
	}
}

// remove deletes the URL file, so no script reads the URL of a server that
// is gone; a file someone put there since (a link, another file) is left
// alone.
func (u *urlFile) remove() error {
	if u == nil {
		return nil
	}
	defer u.close()
	fi, err := os.Lstat(u.path)
	if err != nil || !os.SameFile(fi, u.info) {
		return nil
	}
	return os.Remove(u.path)
}

// serveMCPHTTP runs `buildguard mcp --http ADDR` with the options
// parseMCPArgs checked: it reads the token and checks --url-file (either
// refused is a usage error, before anything listens), listens, prints the
// URL (with the token) as one stderr line and into --url-file, and serves until
// a stop signal (stopSignals). Then in-flight calls are cancelled, a running
// safe build is stopped (its group ended, BUILD failed acknowledged), the
// URL file is removed, and it exits 0 — 131 for SIGQUIT, as the wrapper.
func serveMCPHTTP(srv *mcp.Server, svc *tools.Service, opts mcpHTTPOptions, stderr io.Writer, log hclog.Logger) ExitCode {
	token, err := readToken(opts.tokenFile)
	if err != nil {
		fmt.Fprintf(stderr, "%v\n%s", err, mcpUsage)
		return ExitUsage
	}
	if opts.urlFile != "" {
		if err := checkURLFile(opts.urlFile); err != nil {
			fmt.Fprintf(stderr, "%v\n%s", err, mcpUsage)
			return ExitUsage
		}
	}
	ln, err := net.Listen("tcp", opts.listen)
	if err != nil {
		fmt.Fprintf(stderr, "buildguard mcp: cannot listen on %s: %v\n", opts.addr, err)
		return ExitFailure
	}
	_, port, _ := net.SplitHostPort(ln.Addr().String())
	u := (&url.URL{Scheme: "http", Host: net.JoinHostPort(opts.urlHost, port), Path: httpfront.HTTPPath, RawQuery: url.Values{httpfront.TokenParam: {token}}.Encode()}).String()
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, stopSignals()...)
	defer signal.Stop(sigs)
	var written *urlFile
	if opts.urlFile != "" {
		if written, err = writeURLFile(opts.urlFile, u); err != nil {
			ln.Close()
			fmt.Fprintf(stderr, "buildguard mcp: cannot write --url-file %s: %v\n", opts.urlFile, err)
			if errors.Is(err, errMCPURLFile) {
				return ExitUsage
			}
			return ExitFailure
		}
	}
	defer func() {
		if err := written.remove(); err != nil {
			log.Warn("removing the URL file failed", "error", err)
		}
	}()
	ctx, stop := context.WithCancel(context.Background())
	defer stop()
	caught := make(chan os.Signal, 1)
	go func() {
		select {
		case s := <-sigs:
			log.Info("stopping on a signal; calls in flight are cancelled", "signal", s)
			caught <- s
			stop()
		case <-ctx.Done():
		}
	}()
	fmt.Fprintf(stderr, "buildguard mcp: serving MCP over streamable HTTP at %s\n", u)
	err = srv.ServeStreamableHTTP(ctx, ln, token)
	// A safe build whose call was cancelled may still be stopping its
	// group (a grace period, then SIGKILL) and waiting for BUILD failed to
	// be acknowledged, and one running as a task outlives every request:
	// the server outlives neither (docs/safe-build.md#6,
	// docs/decisions.md#D17).
	closeTasks(srv, log)
	svc.Stop()
	if err != nil {
		log.Error("MCP over HTTP failed", "error", err)
		return ExitFailure
	}
	select {
	case s := <-caught:
		if s == syscall.SIGQUIT {
			return signalExit(s)
		}
	default:
	}
	return ExitOK
}
