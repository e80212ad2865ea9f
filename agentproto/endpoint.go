package agentproto

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// The port-file locations, relative to a project or hybris home directory,
// that discovery tries in order (agent-protocol.md §1.2).
var (
	// DefaultPortFile is where the agent writes its port by default.
	DefaultPortFile = filepath.Join(".reclazz", "agent.port")
	// IDEPortFile is where the IntelliJ plugin has the agent write it.
	IDEPortFile = filepath.Join(".idea", "reclazz", "agent.port")
)

// Endpoint selects the agent's port. The selectors are tried in the order
// Port > PortFile > HybrisHome > discovery in Base, and an explicit selector
// never falls back to the next one (mcp-server.md §1.2 step 7).
type Endpoint struct {
	// Port is an explicit port, as given (it is trimmed, then parsed like Java's
	// Integer.parseInt). Empty means unset.
	Port string
	// PortFile is an explicit port file; a relative path resolves against Base.
	// It must be a regular file. Empty means unset.
	PortFile string
	// HybrisHome selects <HybrisHome>/.reclazz/agent.port (relative to Base when
	// relative). Empty means unset.
	HybrisHome string
	// Base is the directory discovery looks in (<Base>/.reclazz/agent.port, then
	// <Base>/.idea/reclazz/agent.port) and relative paths resolve against.
	// Empty means the current working directory.
	Base string
}

// Resolve returns the port the endpoint selects. When the error wraps
// ErrInvalidPort and the value parsed as an integer, the returned int is that
// (out-of-range) value, so callers can report it; otherwise it is 0 on error.
func (e Endpoint) Resolve() (int, error) {
	if e.Port != "" {
		return ParsePort(e.Port)
	}
	if e.PortFile != "" {
		return readPortFile(e.abs(e.PortFile))
	}
	if e.HybrisHome != "" {
		return readPortFile(filepath.Join(e.abs(e.HybrisHome), DefaultPortFile))
	}
	for _, rel := range []string{DefaultPortFile, IDEPortFile} {
		p := e.abs(rel)
		if isRegular(p) {
			return readPortFile(p)
		}
	}
	return 0, ErrNoPortFile
}

func (e Endpoint) abs(p string) string {
	if filepath.IsAbs(p) {
		return filepath.Clean(p)
	}
	base := e.Base
	if base == "" {
		if wd, err := os.Getwd(); err == nil {
			base = wd
		}
	}
	return filepath.Join(base, p)
}

// ParsePort parses a port as the contract does: trimmed, Java
// Integer.parseInt syntax, then 1..65535. An unparsable value is reported as
// given ("invalid port: <raw>"); an out-of-range one by its number, which is
// also returned.
func ParsePort(raw string) (int, error) {
	n, ok := ParseJavaInt(strings.TrimSpace(raw))
	if !ok {
		return 0, fmt.Errorf("%w: %s", ErrInvalidPort, raw)
	}
	if n < 1 || n > 65535 {
		return n, fmt.Errorf("%w: %d", ErrInvalidPort, n)
	}
	return n, nil
}

// ParseJavaInt parses s like Java's Integer.parseInt: an optional sign and
// decimal digits, no spaces, within the int32 range.
func ParseJavaInt(s string) (int, bool) {
	digits := strings.TrimPrefix(strings.TrimPrefix(s, "+"), "-")
	if len(s)-len(digits) > 1 || digits == "" {
		return 0, false
	}
	for i := 0; i < len(digits); i++ {
		if digits[i] < '0' || digits[i] > '9' {
			return 0, false
		}
	}
	n, err := strconv.ParseInt(s, 10, 32)
	if err != nil {
		return 0, false
	}
	return int(n), true
}

func readPortFile(path string) (int, error) {
	if !isRegular(path) {
		return 0, ErrNoPortFile
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return 0, fmt.Errorf("%w: %s", ErrUnreadablePortFile, path)
	}
	n, ok := ParseJavaInt(strings.TrimSpace(string(data)))
	if !ok {
		return 0, fmt.Errorf("%w: %s", ErrUnreadablePortFile, path)
	}
	if n < 1 || n > 65535 {
		return n, fmt.Errorf("%w: %d", ErrInvalidPort, n)
	}
	return n, nil
}

func isRegular(path string) bool {
	fi, err := os.Stat(path)
	return err == nil && fi.Mode().IsRegular()
}
