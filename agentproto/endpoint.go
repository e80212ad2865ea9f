package agentproto

import (
	"fmt"
	"os"
	"path/filepath"
)

// The port-file locations, relative to a project or hybris home directory,
// that discovery tries in order (docs/agent-protocol.md#1.2).
var (
	// DefaultPortFile is where the agent writes its port by default.
	DefaultPortFile = filepath.Join(".reclazz", "agent.port")
	// IDEPortFile is where the IntelliJ plugin has the agent write it.
	IDEPortFile = filepath.Join(".idea", "reclazz", "agent.port")
)

// Endpoint selects the agent's port. The selectors are tried in the order
// Port > PortFile > HybrisHome > discovery in Base, and an explicit selector
// never falls back to the next one (docs/mcp-server.md#1.2 step 7).
type Endpoint struct {
	// Port is an explicit port, as given (it is trimmed like Java's trim(),
	// then parsed like Java's Integer.parseInt). Empty means unset.
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

// Resolve returns the port the endpoint selects: the explicit Port, which
// wins over every port file, else the port in the port file that PortFile,
// HybrisHome or discovery in Base selects, in that order; an explicit
// selector never falls back to the next one. When the error wraps
// ErrInvalidPort and the value parsed as an integer, the returned int is
// that (out-of-range) value, so callers can report it; otherwise it is 0
// on error.
func (e Endpoint) Resolve() (int, error) {
	if e.Port == "" {
		switch {
		case e.PortFile != "":
			return readPortFile(e.abs(e.PortFile))
		case e.HybrisHome != "":
			return readPortFile(filepath.Join(e.abs(e.HybrisHome), DefaultPortFile))
		}
		for _, rel := range []string{DefaultPortFile, IDEPortFile} {
			if p := e.abs(rel); isRegular(p) {
				return readPortFile(p)
			}
		}
		return 0, ErrNoPortFile
	}
	return ParsePort(e.Port)
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

func readPortFile(path string) (int, error) {
	if !isRegular(path) {
		return 0, ErrNoPortFile
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return 0, fmt.Errorf("%w: %s", ErrUnreadablePortFile, path)
	}
	n, ok := ParseJavaInt(JavaTrim(string(data)))
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
