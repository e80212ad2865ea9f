//go:build mage

package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"time"

	"github.com/buildguard/buildguard/internal/testsupport/lockedbuf"
)

// The fixture lanes of mcpConformance (docs/http.md#6.2): the conformance
// suite 0.2.0-alpha.12 (installed as conformance-next) against
// harness/mcpfixture, buildguard's task store and extension glue with the
// suite's fixture tools, once per requirement set, at that set's wire.
// Every scenario of a set must pass, and every check of it but the
// warnings mcpFixtureExempt names.
var mcpFixtureLanes = []struct {
	requirements string
	args         []string // the fixture's flags
}{
	// Stateless, as 2026-07-28 is, through buildguard's HTTP front; also
	// runs the set's not-scored scenarios: every tasks-* scenario and the
	// SEP-2243 header ones.
	{"2026-07-28", nil},
	// 2025-11-25 keeps sessions: sampling, elicitation and the second
	// stream are server-to-client requests on a session's stream.
	{"2025-11-25", []string{"--stateful"}},
}

// mcpFixtureExempt are, per requirement set, the checks of the fixture
// lanes that warn (none may fail), each with the reason (docs/http.md#6.2).
// Every other check must pass; an exempt check that passes, or that the
// suite no longer reports, fails the lane too, so the list stays true.
var mcpFixtureExempt = map[string]map[mcpCheck]string{
	"2026-07-28": {
		{"sep-2164-resource-not-found", "sep-2164-data-uri", "ResourcesNotFoundDataUri"}: "the front's JSON-RPC errors carry no data but -32021 and -32022 (docs/mcp-server.md#2.2); data.uri is a SHOULD",
	},
	"2025-11-25": {
		{"server-sse-polling", "server-sse-priming-event", "ServerSendsPrimingEvent"}: "go-sdk's handler, stateful and without an event store, sends no priming event for SSE resumption (a SHOULD; 2026-07-28 removed resumption)",
	},
}

// resultDirRE is the name of one scenario's result directory under the
// suite's -o directory: [server-]SCENARIO-TIMESTAMP, the timestamp an ISO
// instant with ':' and '.' as '-'.
var resultDirRE = regexp.MustCompile(`^(?:server-)?(.+)-\d{4}-\d{2}-\d{2}T\d{2}-\d{2}-\d{2}-\d{3}Z$`)

// judgeFixtureLane judges every scenario the suite wrote under results
// against mcpFixtureExempt[requirements].
func judgeFixtureLane(requirements, results string) error {
	files, err := filepath.Glob(filepath.Join(results, "*", "checks.json"))
	if err != nil {
		return err
	}
	if len(files) == 0 {
		return fmt.Errorf("the suite wrote no checks.json under %s", results)
	}
	exempt := mcpFixtureExempt[requirements]
	where := fmt.Sprintf("mcpFixtureExempt[%q] and docs/http.md#6.2", requirements)
	var problems []string
	judged := map[string]bool{}
	for _, f := range files {
		m := resultDirRE.FindStringSubmatch(filepath.Base(filepath.Dir(f)))
		if m == nil {
			return fmt.Errorf("%s: a result directory whose name does not say its scenario", f)
		}
		checks, err := readChecks(filepath.Dir(filepath.Dir(f)), filepath.Base(filepath.Dir(f)))
		if err != nil {
			problems = append(problems, fmt.Sprintf("%s: %v", m[1], err))
			continue
		}
		p, _ := judgeChecks(m[1], checks, exempt, where)
		problems = append(problems, p...)
		judged[m[1]] = true
	}
	for k := range exempt {
		if !judged[k.scenario] {
			problems = append(problems, fmt.Sprintf("%s: the suite ran no such scenario; remove it from %s", k.scenario, where))
		}
	}
	if len(problems) > 0 {
		return fmt.Errorf("checks of the %s set (docs/http.md#6.2):\n  %s", requirements, strings.Join(problems, "\n  "))
	}
	fmt.Printf("mcpConformance: fixture %s: %d scenarios, every check passes but the %d docs/http.md#6.2 names\n", requirements, len(judged), len(exempt))
	return nil
}

// Time limits of a fixture lane.
const (
	mcpFixtureStart = 30 * time.Second
	mcpFixtureStop  = 10 * time.Second
	mcpFixtureSuite = 15 * time.Minute
)

// mcpFixtureConformance runs every fixture lane and returns an error naming
// the lanes that failed.
func mcpFixtureConformance(ctx context.Context, node string) error {
	suite := filepath.Join(mcpConformanceDir, "node_modules", "conformance-next", "dist", "index.js")
	bin, err := filepath.Abs(filepath.Join("bin", "mcpfixture"))
	if err != nil {
		return err
	}
	if err := exec.CommandContext(ctx, "go", "build", "-o", bin, "./harness/mcpfixture").Run(); err != nil {
		return fmt.Errorf("building harness/mcpfixture: %w", err)
	}
	var failed []string
	for _, lane := range mcpFixtureLanes {
		fmt.Printf("mcpConformance: the fixture against the %s requirement set\n", lane.requirements)
		if err := mcpFixtureLane(ctx, node, suite, bin, lane.requirements, lane.args); err != nil {
			fmt.Printf("mcpConformance: fixture %s: %v\n", lane.requirements, err)
			failed = append(failed, lane.requirements)
		}
	}
	if len(failed) > 0 {
		return fmt.Errorf("the fixture failed the requirement sets %s", strings.Join(failed, ", "))
	}
	return nil
}

// mcpFixtureLane starts the fixture, runs one requirement set against it
// and stops it (SIGTERM, exit 0 within mcpFixtureStop).
func mcpFixtureLane(ctx context.Context, node, suite, bin, requirements string, args []string) error {
	dir, err := os.MkdirTemp("", "mcpfixture-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	urlFile := filepath.Join(dir, "url")
	var stderr lockedbuf.Buffer
	cmd := exec.Command(bin, append([]string{"--url-file", urlFile}, args...)...)
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		return err
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	stopped := false
	defer func() {
		if !stopped {
			_ = cmd.Process.Kill()
			<-exited
		}
	}()
	url, err := waitForURL(ctx, urlFile, exited, &stderr)
	if err != nil {
		return err
	}
	sctx, cancel := context.WithTimeout(ctx, mcpFixtureSuite)
	defer cancel()
	run := exec.CommandContext(sctx, node, suite, "server", "--url", url, "--requirements", requirements, "-o", filepath.Join(dir, "results"))
	run.Stdout, run.Stderr = os.Stdout, os.Stderr
	suiteErr := run.Run()

	stopped = true
	_ = cmd.Process.Signal(syscall.SIGTERM)
	select {
	case err := <-exited:
		if err != nil {
			return fmt.Errorf("the fixture after SIGTERM: %w: %s", err, stderr.String())
		}
	case <-time.After(mcpFixtureStop):
		_ = cmd.Process.Kill()
		<-exited
		return fmt.Errorf("the fixture did not exit within %s of SIGTERM", mcpFixtureStop)
	}
	if suiteErr != nil {
		return fmt.Errorf("conformance server --requirements %s: %w", requirements, suiteErr)
	}
	return judgeFixtureLane(requirements, filepath.Join(dir, "results"))
}

// waitForURL waits until the fixture wrote its URL file, it exited, or
// mcpFixtureStart passed.
func waitForURL(ctx context.Context, urlFile string, exited <-chan error, stderr *lockedbuf.Buffer) (string, error) {
	deadline := time.NewTimer(mcpFixtureStart)
	defer deadline.Stop()
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	for {
		if b, err := os.ReadFile(urlFile); err == nil && strings.HasSuffix(string(b), "\n") {
			return strings.TrimSpace(string(b)), nil
		}
		select {
		case err := <-exited:
			return "", fmt.Errorf("the fixture exited before serving (%v): %s", err, stderr.String())
		case <-deadline.C:
			return "", fmt.Errorf("the fixture wrote no URL file within %s: %s", mcpFixtureStart, stderr.String())
		case <-ctx.Done():
			return "", ctx.Err()
		case <-tick.C:
		}
	}
}
