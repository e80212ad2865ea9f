package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"sync"
	"time"

	sdkmcp "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/buildguard/buildguard/internal/hostconfig"
)

// checkTimeout bounds the start, handshake and tools/list of one entry
// (docs/decisions.md#D15).
const checkTimeout = 10 * time.Second

// runInitCheck is `init --check`: each host's configured entry is started
// as the host would start it — its command, args, env and working
// directory — and must answer the MCP handshake and tools/list within
// checkTimeout. One OK or FAIL line per host on stdout; exit 1 on any FAIL.
// A host that was not asked for by name and has no entry is skipped.
func runInitCheck(hosts []hostconfig.Host, named bool, env hostconfig.Env, stdout, stderr io.Writer) ExitCode {
	code, checked := ExitOK, 0
	for _, h := range hosts {
		c, err := hostconfig.ReadConfigured(h, env)
		if errors.Is(err, hostconfig.ErrNoEntry) && !named {
			continue
		}
		checked++
		what := h.File(env)
		if err == nil {
			var detail string
			detail, err = checkEntry(context.Background(), c)
			if err == nil {
				fmt.Fprintf(stdout, "OK   %-8s %s: %s\n", h.Name, what, detail)
				continue
			}
		}
		code = ExitFailure
		reason := err.Error()
		if errors.Is(err, hostconfig.ErrNoEntry) {
			reason += fmt.Sprintf("; run buildguard init --host %s", h.Name)
		}
		fmt.Fprintf(stdout, "FAIL %-8s %s: %s\n", h.Name, what, reason)
	}
	if checked == 0 {
		fmt.Fprintln(stderr, "buildguard init --check: no host has a buildguard entry; run buildguard init first")
		return ExitFailure
	}
	return code
}

// checkEntry starts c over stdio with the go-sdk client and lists its tools.
func checkEntry(ctx context.Context, c hostconfig.Configured) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, checkTimeout)
	defer cancel()
	cmd := exec.Command(c.Command, c.Args...)
	cmd.Dir = c.Dir
	cmd.Env = append(os.Environ(), c.Env...)
	errTail := &tailBuffer{max: 2048}
	cmd.Stderr = errTail
	client := sdkmcp.NewClient(&sdkmcp.Implementation{Name: "buildguard-init-check", Version: version()}, nil)
	cs, err := client.Connect(ctx, &sdkmcp.CommandTransport{Command: cmd}, nil)
	if err != nil {
		return "", withStderr(ctx, fmt.Errorf("starting %s: %w", strings.Join(append([]string{c.Command}, c.Args...), " "), err), errTail)
	}
	defer cs.Close()
	list, err := cs.ListTools(ctx, nil)
	if err != nil {
		return "", withStderr(ctx, fmt.Errorf("tools/list: %w", err), errTail)
	}
	if len(list.Tools) == 0 {
		return "", errors.New("the server lists no tools")
	}
	return fmt.Sprintf("%d tools, protocol %s", len(list.Tools), cs.InitializeResult().ProtocolVersion), nil
}

func withStderr(ctx context.Context, err error, tail *tailBuffer) error {
	if ctx.Err() != nil {
		err = fmt.Errorf("no answer within %s: %w", checkTimeout, err)
	}
	if s := strings.TrimSpace(tail.String()); s != "" {
		lines := strings.Split(s, "\n")
		return fmt.Errorf("%w (the server said: %s)", err, lines[len(lines)-1])
	}
	return err
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
