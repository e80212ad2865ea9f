package refagent

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// ErrBadOption means an agent option cannot be expressed in the agent's
// comma-separated argument string.
var ErrBadOption = errors.New("invalid reference agent option")

// Options are the reference agent's arguments. The zero value watches no
// directory, starts watching at once, debounces 100 ms, listens on an
// ephemeral port and writes the port file to <working dir>/.reclazz/agent.port.
type Options struct {
	// WatchDirs are the class output roots to watch. Default: none. Relative
	// paths resolve against the JVM's working directory. A path must not
	// contain ',' or ';'.
	WatchDirs []string
	// PortFile is where the agent writes its port. Default "": the agent's
	// own default, <working dir>/.reclazz/agent.port. Must not contain ','.
	PortFile string
	// StartupDelaySec is the delay before the watcher registers its
	// directories, 0–300. Default 0: at once. (The agent's own default, 30 s,
	// applies only when the argument is absent, which AgentFlag never does.)
	StartupDelaySec int
	// DebounceMs is the quiet time before a changed file is reported,
	// 0–10000. Default 0: 100 ms.
	DebounceMs int
	// StatusPort is a fixed status-socket port. Default 0: ephemeral.
	StatusPort int
	// TCPNoDelay sets TCP_NODELAY on every status-socket connection, so
	// that the agent sends each line at once. Default false: the JVM's
	// default, with Nagle's algorithm.
	TCPNoDelay bool
}

// AgentFlag returns the JVM flag `-javaagent:<jar>=<args>` for the options,
// as one argv element (paths may contain spaces). It fails with ErrBadOption
// when a value cannot be represented: a ',' or ';' in a path, a '=' in the jar
// path, or a number out of range.
func AgentFlag(jarPath string, o Options) (string, error) {
	if jarPath == "" || strings.Contains(jarPath, "=") {
		return "", fmt.Errorf("%w: jar path %q must be non-empty and free of '='", ErrBadOption, jarPath)
	}
	if o.StartupDelaySec < 0 || o.StartupDelaySec > 300 {
		return "", fmt.Errorf("%w: StartupDelaySec %d is outside 0–300", ErrBadOption, o.StartupDelaySec)
	}
	if o.DebounceMs < 0 || o.DebounceMs > 10000 {
		return "", fmt.Errorf("%w: DebounceMs %d is outside 0–10000", ErrBadOption, o.DebounceMs)
	}
	if o.StatusPort < 0 || o.StatusPort > 65535 {
		return "", fmt.Errorf("%w: StatusPort %d is outside 0–65535", ErrBadOption, o.StatusPort)
	}
	debounce := o.DebounceMs
	if debounce == 0 {
		debounce = 100
	}
	for _, d := range o.WatchDirs {
		if d == "" || strings.ContainsAny(d, ",;") {
			return "", fmt.Errorf("%w: watch directory %q must be non-empty and free of ',' and ';'", ErrBadOption, d)
		}
	}
	args := []string{
		"watchDirs=" + strings.Join(o.WatchDirs, ";"),
		"startupDelaySec=" + strconv.Itoa(o.StartupDelaySec),
		"debounceMs=" + strconv.Itoa(debounce),
	}
	if o.PortFile != "" {
		if strings.Contains(o.PortFile, ",") {
			return "", fmt.Errorf("%w: port file %q must be free of ','", ErrBadOption, o.PortFile)
		}
		args = append(args, "portFile="+o.PortFile)
	}
	if o.StatusPort != 0 {
		args = append(args, "statusPort="+strconv.Itoa(o.StatusPort))
	}
	if o.TCPNoDelay {
		args = append(args, "tcpNoDelay=true")
	}
	return "-javaagent:" + jarPath + "=" + strings.Join(args, ","), nil
}
