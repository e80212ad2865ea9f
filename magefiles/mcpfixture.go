//go:build mage

package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/buildguard/buildguard/internal/testsupport/lockedbuf"
)

// The fixture lanes of mcpConformance (docs/http.md#6.2): the conformance
// suite 0.2.0-alpha.12 (installed as conformance-next) against
// harness/mcpfixture, buildguard's task store and extension glue with the
// suite's fixture tools, once per requirement set, at that set's wire.
// Every scenario of a set must pass: no baseline of expected failures.
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
	return nil
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
