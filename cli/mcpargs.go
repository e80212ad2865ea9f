package cli

import (
	"errors"
	"flag"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
	"unicode"

	"github.com/buildguard/buildguard/agentproto"
	"github.com/buildguard/buildguard/mcp/httpfront"
	"github.com/buildguard/buildguard/service/tools"
)

//lint:file-ignore ST1005 the startup errors are the contract's messages (docs/mcp-server.md#1.1), printed as they are.

// The startup parse failures of `buildguard mcp` (docs/mcp-server.md#1.1)
// and of its HTTP form (docs/decisions.md#D14); each is printed on stderr,
// followed by the usage, with exit 2.
var (
	errMCPUnknownOption = errors.New("Unknown MCP startup option")
	errMCPBadPath       = errors.New("Path must be nonblank, at most 4096 characters and contain no control characters")
	errMCPNoProject     = errors.New("projectDir must name an existing directory")
	errMCPHTTPAddr      = errors.New("--http ADDR must be a loopback address with a port: 127.0.0.1:PORT, [::1]:PORT or localhost:PORT (port 0 picks a free one)")
	errMCPHTTPOnly      = errors.New("--token-file and --url-file need --http ADDR")
	errMCPAnswerWithin  = errors.New("--answer-within needs a duration from 1s to 10m, such as 50s")
)

// errMCPMissingValue is "Duplicate option or missing value: <flag>".
func errMCPMissingValue(flag string) error {
	return fmt.Errorf("Duplicate option or missing value: %s", flag)
}

// mcpMessages words the parse failures of `buildguard mcp`: every flag is
// given at most once, and anything but a flag is an unknown option.
var mcpMessages = flagMessages{
	unknown: func(string) error { return errMCPUnknownOption },
	missing: errMCPMissingValue,
	twice:   errMCPMissingValue,
}

// maxPathChars bounds a startup path, in UTF-16 units.
const maxPathChars = 4096

// mcpOptions is the command line of `buildguard mcp`, both forms: the
// settings the tool service starts with, and the options of the HTTP form.
type mcpOptions struct {
	tools.Deps
	http mcpHTTPOptions
}

// mcpHTTPOptions are the options of the HTTP form; addr "" means stdio.
type mcpHTTPOptions struct {
	addr               string // --http as given
	listen, urlHost    string // the address addr listens on, and the host its URL names
	tokenFile, urlFile string
}

// parseMCPArgs reads every startup option of `buildguard mcp`, stdio and
// HTTP, in one pass (docs/mcp-server.md#1.1, docs/decisions.md#D14) and
// resolves the paths against the working directory wd: --project-dir is
// canonicalised and must be a directory; --port-file resolves against the
// project (else wd), absolute and clean but not canonicalised, and need
// not exist yet. `--help` alone is flag.ErrHelp.
func parseMCPArgs(args []string, wd string) (mcpOptions, error) {
	var o mcpOptions
	var projectDir, portFile string
	s := newFlagSet(noOperands, mcpMessages)
	for flag, dst := range map[string]*string{
		"--project-dir": &projectDir, "--port-file": &portFile,
		"--token-file": &o.http.tokenFile, "--url-file": &o.http.urlFile, "--http": &o.http.addr,
	} {
		s.value(flag, false, func(v string) error {
			switch {
			case strings.HasPrefix(v, "--"): // the reference reads a flag there
				return errMCPMissingValue(flag)
			case flag == "--http" && v == "":
				return errMCPHTTPAddr
			case flag != "--http" && !validStartupPath(v):
				return errMCPBadPath
			}
			*dst = v
			return nil
		})
	}
	s.value("--answer-within", false, func(v string) error {
		d, err := time.ParseDuration(v)
		if strings.HasPrefix(v, "--") {
			return errMCPMissingValue("--answer-within")
		}
		if err != nil || d < tools.MinAnswerWithin || d > tools.MaxAnswerWithin {
			return errMCPAnswerWithin
		}
		o.AnswerWithin = d
		return nil
	})
	if _, _, err := s.parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) && len(args) > 1 {
			return o, errMCPUnknownOption
		}
		return o, err
	}
	if err := o.http.check(); err != nil {
		return o, err
	}
	base, err := filepath.Abs(wd)
	if err != nil {
		return o, fmt.Errorf("resolving the working directory: %w", err)
	}
	o.Base, o.ClientWorkingDirectory = base, wd
	if projectDir != "" {
		real, err := filepath.EvalSymlinks(resolvePath(base, projectDir))
		if err != nil {
			return o, errMCPNoProject
		}
		if st, err := os.Stat(real); err != nil || !st.IsDir() {
			return o, errMCPNoProject
		}
		o.Base, o.ProjectSelected = real, true
	}
	if portFile != "" {
		o.StartupPortFile = resolvePath(o.Base, portFile)
	}
	return o, nil
}

// check checks the HTTP form's options together and fills in the address
// to listen on (docs/decisions.md#D14).
func (h *mcpHTTPOptions) check() error {
	if h.addr == "" {
		if h.tokenFile != "" || h.urlFile != "" {
			return errMCPHTTPOnly
		}
		return nil
	}
	var err error
	h.listen, h.urlHost, err = loopbackListenAddr(h.addr)
	return err
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

// resolvePath makes p absolute against base and cleans it.
func resolvePath(base, p string) string {
	if filepath.IsAbs(p) {
		return filepath.Clean(p)
	}
	return filepath.Join(base, p)
}

// validStartupPath: nonblank (Java's isBlank), at most 4096 UTF-16 units, no
// ISO control character (C0, DEL, C1).
func validStartupPath(p string) bool {
	if agentproto.IsBlank(p) || agentproto.UTF16Len(p) > maxPathChars {
		return false
	}
	return !strings.ContainsFunc(p, unicode.IsControl)
}
