package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	sdkmcp "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/buildguard/buildguard/service/hostconfig"
	"github.com/buildguard/buildguard/service/tools"
)

// checkTimeout bounds each entry's check from start to the end of its
// process group (docs/decisions.md#D15).
const checkTimeout = 10 * time.Second

// checkExitGrace is how long a server that has answered may take to exit
// after its stdin closes before its process group is killed.
const checkExitGrace = 2 * time.Second

// runInitCheck is `init --check`: hostconfig.Checks first reads what each
// host would start — its command, args, env and working directory, with
// the host's variables expanded, serving this project — and each entry is
// then started as the host would start it, and must answer the MCP
// handshake as buildguard and list our tools within checkTimeout. One OK
// or FAIL line per host on stdout; exit 1 on any FAIL. A host that was
// not asked for by name and has no entry is skipped. A stop signal
// (SIGINT, SIGTERM, …) ends the server under check with its process
// group, checks no further host, and exits 128+signal.
func runInitCheck(req hostconfig.Request, stdout, stderr io.Writer) ExitCode {
	ctx, interrupted, release := interruptible()
	defer release()
	checks, err := hostconfig.Checks(req, os.LookupEnv)
	if err != nil {
		fmt.Fprintf(stderr, "buildguard init: %v\n", err)
		return ExitUsage
	}
	code := ExitOK
	for _, c := range checks {
		if ctx.Err() != nil {
			break
		}
		err := c.Err
		if err == nil {
			var detail string
			detail, err = checkEntry(ctx, c.Entry)
			if ctx.Err() != nil {
				break
			}
			if err == nil {
				if len(c.Unchecked) > 0 {
					detail += "; not read, so not checked for settings that disable it: " + strings.Join(c.Unchecked, ", ")
				}
				fmt.Fprintf(stdout, "OK   %-8s %s: %s\n", c.Host.Name, c.File, detail)
				continue
			}
		}
		code = ExitFailure
		reason := err.Error()
		if errors.Is(err, hostconfig.ErrNoEntry) {
			reason += fmt.Sprintf("; run buildguard init --host %s", c.Host.Name)
		}
		fmt.Fprintf(stdout, "FAIL %-8s %s: %s\n", c.Host.Name, c.File, reason)
	}
	if s := interrupted(); s != nil {
		fmt.Fprintf(stderr, "buildguard init --check: interrupted (%v); the server under check was ended with its process group, and no further host was checked\n", s)
		return signalExit(s)
	}
	if len(checks) == 0 {
		fmt.Fprintln(stderr, "buildguard init --check: no host has a buildguard entry; run buildguard init first")
		return ExitFailure
	}
	return code
}

// interruptible returns a context that a stop signal ends, the signal that
// ended it (nil until one has), and release, which stops catching them.
func interruptible() (ctx context.Context, interrupted func() os.Signal, release func()) {
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, stopSignals()...)
	ctx, cancel := context.WithCancel(context.Background())
	var mu sync.Mutex
	var got os.Signal
	done := make(chan struct{})
	go func() {
		select {
		case s := <-sigs:
			mu.Lock()
			got = s
			mu.Unlock()
			cancel()
		case <-done:
		}
	}()
	interrupted = func() os.Signal {
		mu.Lock()
		defer mu.Unlock()
		return got
	}
	return ctx, interrupted, func() {
		signal.Stop(sigs)
		close(done)
		cancel()
	}
}

// checkEntry starts c in a process group of its own, talks MCP to it with
// the go-sdk client, and requires serverInfo.name buildguard and every tool
// of ours in tools/list. At checkTimeout the group is killed, whatever
// the server does with SIGTERM; after the check its stdin is closed and,
// after checkExitGrace, the group is killed too, so no process it started
// outlives the check.
func checkEntry(ctx context.Context, c hostconfig.Configured) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, checkTimeout)
	defer cancel()
	argv := strings.Join(append([]string{c.Command}, c.Args...), " ")
	s, err := startServer(c)
	if err != nil {
		return "", fmt.Errorf("starting %s: %w", argv, err)
	}
	stopKill := context.AfterFunc(ctx, s.kill)
	defer func() {
		stopKill()
		s.stop(ctx)
	}()
	client := sdkmcp.NewClient(&sdkmcp.Implementation{Name: "buildguard-init-check", Version: version()}, nil)
	cs, err := client.Connect(ctx, &sdkmcp.IOTransport{Reader: s.stdout, Writer: s.stdin}, nil)
	if err != nil {
		return "", s.failure(ctx, fmt.Errorf("starting %s: %w", argv, err))
	}
	defer cs.Close()
	res := cs.InitializeResult()
	if res.ServerInfo == nil || res.ServerInfo.Name != "buildguard" {
		name := "no name"
		if res.ServerInfo != nil {
			name = fmt.Sprintf("%q", res.ServerInfo.Name)
		}
		return "", fmt.Errorf("%s answered as %s, not as buildguard; the entry starts another server", argv, name)
	}
	list, err := cs.ListTools(ctx, nil)
	if err != nil {
		return "", s.failure(ctx, fmt.Errorf("tools/list: %w", err))
	}
	var missing []string
	for _, name := range tools.Names() {
		if !slices.ContainsFunc(list.Tools, func(t *sdkmcp.Tool) bool { return t.Name == name }) {
			missing = append(missing, name)
		}
	}
	if len(missing) > 0 {
		return "", fmt.Errorf("the server (buildguard %s) lists %d tools but not %s; the entry starts another version of buildguard: run buildguard init again", res.ServerInfo.Version, len(list.Tools), strings.Join(missing, ", "))
	}
	return fmt.Sprintf("%d tools, protocol %s", len(list.Tools), res.ProtocolVersion), nil
}

// checkedServer is a server process under check.
type checkedServer struct {
	cmd    *exec.Cmd
	stdin  io.WriteCloser
	stdout io.ReadCloser
	errs   *tailBuffer
	exited chan struct{} // closed once Wait has returned
}

// startServer starts c in its own process group with pipes of our own, so
// that Wait, which runs from the start, never closes what the client reads.
func startServer(c hostconfig.Configured) (*checkedServer, error) {
	env := append(os.Environ(), c.Env...)
	path, err := hostLookPath(c.Command, lastValue(env, "PATH"), c.Dir)
	if err != nil {
		return nil, fmt.Errorf("%s is not on the PATH the host passes to the server (%s), so the host could not start it either: "+
			"install buildguard in a directory on PATH, or run buildguard init --absolute to name this machine's binary", c.Command, shortList(lastValue(env, "PATH")))
	}
	cmd := exec.Command(path, c.Args...)
	cmd.Args[0] = c.Command
	cmd.Dir = c.Dir
	cmd.Env = env
	cmd.WaitDelay = time.Second // a stderr held open by a process that left the group
	ownGroup(cmd)
	inR, inW, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	outR, outW, err := os.Pipe()
	if err != nil {
		inR.Close()
		inW.Close()
		return nil, err
	}
	s := &checkedServer{cmd: cmd, stdin: inW, stdout: outR, errs: &tailBuffer{max: 8192}, exited: make(chan struct{})}
	cmd.Stdin, cmd.Stdout, cmd.Stderr = inR, outW, s.errs
	err = cmd.Start()
	inR.Close()
	outW.Close()
	if err != nil {
		inW.Close()
		outR.Close()
		return nil, err
	}
	go func() {
		_ = cmd.Wait()
		close(s.exited)
	}()
	return s, nil
}

// lastValue returns the value of the last NAME=value of env, as the
// process that gets env sees it.
func lastValue(env []string, name string) string {
	for i := len(env) - 1; i >= 0; i-- {
		if v, ok := strings.CutPrefix(env[i], name+"="); ok {
			return v
		}
	}
	return ""
}

// shortList is a PATH for a message: "PATH=" and its first directories.
func shortList(path string) string {
	dirs := filepath.SplitList(path)
	if len(dirs) == 0 {
		return "PATH is empty"
	}
	if len(dirs) > 6 {
		dirs = append(dirs[:6], "…")
	}
	return "PATH=" + strings.Join(dirs, string(filepath.ListSeparator))
}

// kill ends the server's whole process group.
func (s *checkedServer) kill() { killGroup(s.cmd) }

// stop closes the server's stdin, gives it checkExitGrace (within ctx) to
// exit, and kills its group either way; it returns once Wait has.
func (s *checkedServer) stop(ctx context.Context) {
	s.stdin.Close()
	grace := time.NewTimer(checkExitGrace)
	defer grace.Stop()
	select {
	case <-s.exited:
	case <-grace.C:
	case <-ctx.Done():
	}
	s.kill()
	// The group is killed and WaitDelay bounds the stderr copy; a process
	// we may not signal (it changed its user) is left after a last grace.
	select {
	case <-s.exited:
	case <-time.After(checkExitGrace):
	}
	s.stdout.Close()
}

// failure is err with the server's own reason: a note when the deadline
// passed, and the last meaningful line it wrote on stderr, read after it
// has exited so that nothing it said is missed.
func (s *checkedServer) failure(ctx context.Context, err error) error {
	if ctx.Err() != nil {
		err = fmt.Errorf("no answer within %s: %w", checkTimeout, err)
	}
	s.stdin.Close()
	select {
	case <-s.exited:
	case <-time.After(checkExitGrace):
	case <-ctx.Done():
	}
	if reason := serverReason(s.errs.String()); reason != "" {
		return fmt.Errorf("%w (the server said: %s)", err, reason)
	}
	return err
}

// serverReason picks the line of a server's stderr that says why it
// failed: the last non-blank line before a usage text, else the last one.
func serverReason(stderr string) string {
	var lines []string
	for _, l := range strings.Split(stderr, "\n") {
		l = strings.TrimSpace(l)
		if strings.HasPrefix(strings.ToLower(l), "usage:") && len(lines) > 0 {
			break
		}
		if l != "" {
			lines = append(lines, l)
		}
	}
	if len(lines) == 0 {
		return ""
	}
	return printable(lines[len(lines)-1], 300)
}

// printable returns s without control characters (a server's escape
// sequences never reach the user's terminal), cut to at most max runes.
func printable(s string, max int) string {
	var b strings.Builder
	n := 0
	for _, r := range s {
		if r < 0x20 && r != '\t' || r == 0x7f || r >= 0x80 && r < 0xa0 {
			continue
		}
		if n == max {
			b.WriteString("…")
			break
		}
		b.WriteRune(r)
		n++
	}
	return b.String()
}

// tailBuffer keeps the last max bytes written to it.
type tailBuffer struct {
	mu  sync.Mutex
	max int
	b   []byte
}

func (t *tailBuffer) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.b = append(t.b, p...)
	if len(t.b) > t.max {
		t.b = t.b[len(t.b)-t.max:]
	}
	return len(p), nil
}

func (t *tailBuffer) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return string(t.b)
}
