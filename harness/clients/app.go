//go:build unix

package clients

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/buildguard/buildguard/harness/jvm"
)

// Readiness and probe bounds.
const (
	// ReadyTimeout bounds the wait for READY and the agent's "] Watching ".
	ReadyTimeout = 30 * time.Second
	// ProbeTimeout bounds the wait for one PROBE answer.
	ProbeTimeout = 5 * time.Second
)

// WatchingMarker is what the reference agent prints once its watcher runs.
const WatchingMarker = "] Watching "

// Errors of the live application.
var (
	// ErrAppNotReady means the JVM did not print READY and the agent's
	// watching line within ReadyTimeout; app.log has the details.
	ErrAppNotReady = errors.New("app not ready")
	// ErrAppExited means the JVM exited while a lane still needed it.
	ErrAppExited = errors.New("app exited")
)

// Probe is one PROBE line: the JVM's identity, the Service call counter and
// Service.value().
type Probe struct {
	PID     string `json:"pid"`
	Nonce   string `json:"nonce"`
	Counter int    `json:"counter"`
	Value   int    `json:"value"`
}

// AppConfig configures StartApp.
type AppConfig struct {
	// Java is the java executable. Empty means "java" from PATH.
	Java string
	// AgentJar is the agent jar passed to -javaagent. Required.
	AgentJar string
	// PortFile is where the agent writes its port. Empty means
	// <project>/agent.port.
	PortFile string
}

// App is the live consumer JVM with the agent attached. Close kills it.
type App struct {
	// PID is the JVM's pid as the app reports it.
	PID string
	// Nonce is the app's random start nonce.
	Nonce string
	// PortFile is the agent's port file.
	PortFile string
	// Log is app.log: everything the JVM printed.
	Log string

	proc *jvm.Process
}

// StartApp launches `java -javaagent:<jar>=watchDirs=<classes>,startupDelaySec=1,
// debounceMs=100,portFile=<portfile> -cp classes App` in the project root and
// waits for READY and the agent's watching line. On any failure the JVM is
// killed before StartApp returns.
func StartApp(ctx context.Context, p *Project, cfg AppConfig) (_ *App, err error) {
	if cfg.AgentJar == "" {
		return nil, errors.New("starting app: no agent jar")
	}
	portFile := cfg.PortFile
	if portFile == "" {
		portFile = filepath.Join(p.Root, "agent.port")
	}
	logPath := filepath.Join(p.Root, "app.log")
	agentArgs := fmt.Sprintf("watchDirs=%s,startupDelaySec=1,debounceMs=100,portFile=%s", p.Classes, portFile)
	proc, err := jvm.Start(jvm.Config{
		Java:    cfg.Java,
		Args:    []string{"-javaagent:" + cfg.AgentJar + "=" + agentArgs, "-cp", p.Classes, "App"},
		Dir:     p.Root,
		LogFile: logPath,
		Stdin:   true,
	})
	if err != nil {
		return nil, fmt.Errorf("starting app: %w", err)
	}
	a := &App{PortFile: portFile, Log: logPath, proc: proc}
	defer func() {
		if err != nil {
			a.Close()
		}
	}()

	deadline := time.Now().Add(ReadyTimeout)
	notReady := func(err error, what string) error {
		switch {
		case errors.Is(err, jvm.ErrExited):
			return fmt.Errorf("%w before it was ready; see %s", ErrAppExited, logPath)
		case errors.Is(err, jvm.ErrNoLine):
			return fmt.Errorf("%w within %s (no %s); see %s", ErrAppNotReady, ReadyTimeout, what, logPath)
		}
		return err
	}
	var id []string
	i, err := proc.WaitLine(ctx, 0, time.Until(deadline), func(l string) bool {
		f := strings.Fields(l)
		return strings.HasPrefix(l, "READY ") && len(f) == 3
	})
	if err != nil {
		return nil, notReady(err, "READY")
	}
	id = strings.Fields(proc.Lines().Since(i)[0])
	a.PID, a.Nonce = id[1], id[2]
	if _, err := proc.WaitLine(ctx, 0, time.Until(deadline), func(l string) bool { return strings.Contains(l, WatchingMarker) }); err != nil {
		return nil, notReady(err, "watching line")
	}
	if err := waitFile(ctx, portFile, ReadyTimeout); err != nil {
		return nil, fmt.Errorf("%w: no port file %s: %w", ErrAppNotReady, portFile, err)
	}
	return a, nil
}

// parseProbe parses "PROBE <pid> <nonce> <counter> <value>".
func parseProbe(line string) (Probe, bool) {
	f := strings.Fields(line)
	if len(f) != 5 || f[0] != "PROBE" {
		return Probe{}, false
	}
	c, err1 := strconv.Atoi(f[3])
	v, err2 := strconv.Atoi(f[4])
	if err1 != nil || err2 != nil {
		return Probe{}, false
	}
	return Probe{PID: f[1], Nonce: f[2], Counter: c, Value: v}, true
}

// Probe writes one line to the app's stdin and returns its PROBE answer.
func (a *App) Probe(ctx context.Context) (Probe, error) {
	from := a.proc.Lines().Mark()
	if err := a.proc.WriteLine("probe"); err != nil {
		return Probe{}, fmt.Errorf("%w: writing probe: %w", ErrAppExited, err)
	}
	i, err := a.proc.WaitLine(ctx, from, ProbeTimeout, func(l string) bool {
		_, ok := parseProbe(l)
		return ok
	})
	switch {
	case errors.Is(err, jvm.ErrExited):
		return Probe{}, fmt.Errorf("%w; see %s", ErrAppExited, a.Log)
	case errors.Is(err, jvm.ErrNoLine):
		return Probe{}, fmt.Errorf("no PROBE answer within %s; see %s", ProbeTimeout, a.Log)
	case err != nil:
		return Probe{}, err
	}
	pr, _ := parseProbe(a.proc.Lines().Since(i)[0])
	return pr, nil
}

// Alive reports whether the JVM is still running.
func (a *App) Alive() bool { return a.proc.Running() }

// Close kills the JVM's process group and waits (bounded) for it. It is
// idempotent.
func (a *App) Close() error {
	a.proc.Kill()
	return nil
}

// waitFile polls for path to exist as a non-empty regular file.
func waitFile(ctx context.Context, path string, limit time.Duration) error {
	deadline := time.Now().Add(limit)
	for {
		if st, err := os.Stat(path); err == nil && st.Mode().IsRegular() && st.Size() > 0 {
			return nil
		}
		if time.Now().After(deadline) {
			return os.ErrNotExist
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(50 * time.Millisecond):
		}
	}
}
