package hostconfig

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	sdkmcp "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/buildguard/buildguard/service/tools"
)

// checkTimeout bounds each entry's check from start to the end of its
// process group (docs/decisions.md#D15).
const checkTimeout = 10 * time.Second

// checkExitGrace is how long a server that has answered may take to exit
// after its stdin closes before its process group is killed.
const checkExitGrace = 2 * time.Second

// ErrOtherVersion marks an entry whose server answers as buildguard but
// lacks tools of ours: it starts another version of buildguard.
var ErrOtherVersion = errors.New("the entry starts another version of buildguard")

// NotFoundError is an entry whose command is not on the PATH the host
// passes to the server, so the host could not start it.
type NotFoundError struct {
	// Command is the entry's command; PATH is the PATH the server gets.
	Command, PATH string
}

func (e *NotFoundError) Error() string {
	return fmt.Sprintf("%s is not on the PATH the host passes to the server (%s), so the host could not start it either", e.Command, ShortPATH(e.PATH))
}

// CheckEntry starts c as its host would (docs/decisions.md#D15), in a
// process group of its own, talks MCP to it with the go-sdk client as
// client version clientVersion, and requires serverInfo.name buildguard
// and every tool of ours in tools/list; it returns what answered. A
// command the host would not find is a *NotFoundError; a server of
// another version of buildguard is ErrOtherVersion. At checkTimeout the
// group is killed, whatever the server does with SIGTERM; after the check
// its stdin is closed and, after checkExitGrace, the group is killed too,
// so no process it started outlives the check.
func CheckEntry(ctx context.Context, c Configured, clientVersion string) (string, error) {
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
	client := sdkmcp.NewClient(&sdkmcp.Implementation{Name: "buildguard-init-check", Version: clientVersion}, nil)
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
		return "", fmt.Errorf("the server (buildguard %s) lists %d tools but not %s; %w", res.ServerInfo.Version, len(list.Tools), strings.Join(missing, ", "), ErrOtherVersion)
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
func startServer(c Configured) (*checkedServer, error) {
	env := append(os.Environ(), c.Env...)
	path, err := hostLookPath(c.Command, lastValue(env, "PATH"), c.Dir)
	if err != nil {
		return nil, &NotFoundError{Command: c.Command, PATH: lastValue(env, "PATH")}
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

// ShortPATH is a PATH for a message: "PATH=" and its first directories.
func ShortPATH(path string) string {
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
