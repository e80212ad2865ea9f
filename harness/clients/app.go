//go:build unix

package clients

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// Readiness and probe bounds.
const (
	// ReadyTimeout bounds the wait for READY and the agent's "] Watching ".
	ReadyTimeout = 30 * time.Second
	// ProbeTimeout bounds the wait for one PROBE answer.
	ProbeTimeout = 5 * time.Second
	// killTimeout bounds the wait for the JVM after SIGKILL.
	killTimeout = 10 * time.Second
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

	cmd     *exec.Cmd
	stdin   io.WriteCloser
	probes  chan Probe
	done    chan struct{} // closed when the JVM has exited and stdout is drained
	mu      sync.Mutex
	waitErr error
	once    sync.Once
}

// StartApp launches `java -javaagent:<jar>=watchDirs=<classes>,startupDelaySec=1,
// debounceMs=100,portFile=<portfile> -cp classes App` in the project root and
// waits for READY and the agent's watching line. On any failure the JVM is
// killed before StartApp returns.
func StartApp(ctx context.Context, p *Project, cfg AppConfig) (_ *App, err error) {
	java := cfg.Java
	if java == "" {
		if java, err = exec.LookPath("java"); err != nil {
			return nil, fmt.Errorf("finding java: %w (install a JDK 17: apt-get install -y openjdk-17-jdk-headless)", err)
		}
	}
	if cfg.AgentJar == "" {
		return nil, errors.New("starting app: no agent jar")
	}
	portFile := cfg.PortFile
	if portFile == "" {
		portFile = filepath.Join(p.Root, "agent.port")
	}
	logPath := filepath.Join(p.Root, "app.log")
	logFile, err := os.Create(logPath)
	if err != nil {
		return nil, fmt.Errorf("creating app.log: %w", err)
	}
	agentArgs := fmt.Sprintf("watchDirs=%s,startupDelaySec=1,debounceMs=100,portFile=%s", p.Classes, portFile)
	cmd := exec.Command(java, "-javaagent:"+cfg.AgentJar+"="+agentArgs, "-cp", p.Classes, "App")
	cmd.Dir = p.Root
	cmd.Stderr = logFile
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	stdin, err := cmd.StdinPipe()
	if err != nil {
		logFile.Close()
		return nil, fmt.Errorf("starting app: %w", err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		logFile.Close()
		return nil, fmt.Errorf("starting app: %w", err)
	}
	if err := cmd.Start(); err != nil {
		logFile.Close()
		return nil, fmt.Errorf("starting app: %w", err)
	}
	a := &App{PortFile: portFile, Log: logPath, cmd: cmd, stdin: stdin, probes: make(chan Probe, 16), done: make(chan struct{})}
	defer func() {
		if err != nil {
			a.Close()
		}
	}()

	ready := make(chan [2]string, 1)
	watching := make(chan struct{})
	go func() {
		defer close(a.done)
		defer logFile.Close()
		sc := bufio.NewScanner(stdout)
		sc.Buffer(make([]byte, 64*1024), 1024*1024)
		var watchOnce sync.Once
		for sc.Scan() {
			line := strings.TrimRight(sc.Text(), "\r")
			fmt.Fprintln(logFile, line)
			switch {
			case strings.HasPrefix(line, "READY "):
				f := strings.Fields(line)
				if len(f) == 3 {
					select {
					case ready <- [2]string{f[1], f[2]}:
					default:
					}
				}
			case strings.HasPrefix(line, "PROBE "):
				if pr, ok := parseProbe(line); ok {
					select {
					case a.probes <- pr:
					default: // nobody asked; drop
					}
				}
			case strings.Contains(line, WatchingMarker):
				watchOnce.Do(func() { close(watching) })
			}
		}
		io.Copy(io.Discard, stdout)
		werr := cmd.Wait()
		a.mu.Lock()
		a.waitErr = werr
		a.mu.Unlock()
	}()

	timer := time.NewTimer(ReadyTimeout)
	defer timer.Stop()
	gotReady, gotWatching := false, false
	for !gotReady || !gotWatching {
		select {
		case id := <-ready:
			a.PID, a.Nonce, gotReady = id[0], id[1], true
		case <-watching:
			gotWatching, watching = true, nil
		case <-a.done:
			return nil, fmt.Errorf("%w before it was ready; see %s", ErrAppExited, logPath)
		case <-timer.C:
			return nil, fmt.Errorf("%w within %s (READY %v, watching %v); see %s", ErrAppNotReady, ReadyTimeout, gotReady, gotWatching, logPath)
		case <-ctx.Done():
			return nil, ctx.Err()
		}
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
	// Drop a stale answer, if any.
	select {
	case <-a.probes:
	default:
	}
	if _, err := io.WriteString(a.stdin, "probe\n"); err != nil {
		return Probe{}, fmt.Errorf("%w: writing probe: %w", ErrAppExited, err)
	}
	t := time.NewTimer(ProbeTimeout)
	defer t.Stop()
	select {
	case pr := <-a.probes:
		return pr, nil
	case <-a.done:
		return Probe{}, fmt.Errorf("%w; see %s", ErrAppExited, a.Log)
	case <-t.C:
		return Probe{}, fmt.Errorf("no PROBE answer within %s; see %s", ProbeTimeout, a.Log)
	case <-ctx.Done():
		return Probe{}, ctx.Err()
	}
}

// Alive reports whether the JVM is still running.
func (a *App) Alive() bool {
	select {
	case <-a.done:
		return false
	default:
		return true
	}
}

// Close kills the JVM's process group and waits (bounded) for it. It is
// idempotent.
func (a *App) Close() error {
	a.once.Do(func() {
		a.stdin.Close()
		if a.cmd.Process != nil {
			syscall.Kill(-a.cmd.Process.Pid, syscall.SIGKILL)
			a.cmd.Process.Kill()
		}
		select {
		case <-a.done:
		case <-time.After(killTimeout):
		}
	})
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
