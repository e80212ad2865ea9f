//go:build mage

package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httputil"
	neturl "net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"time"
)

// The lane of `buildguard mcp --http` against the 2026-07-28 requirement set
// of the suite 0.2.0-alpha.12 (conformance-next), at that revision's wire,
// as docs/http.md#6.1 lists it: the scenarios that apply to a server whose
// only tools are buildguard's, each judged check by check, and those that
// call the suite's fixture tools, resources or prompts (the fixture lanes
// run them).
var (
	mcpNextRun = []string{
		"tools-list", "server-sse-multiple-streams", "resources-list", "sep-2164-resource-not-found",
		"dns-rebinding-protection", "input-required-result-missing-input-response",
		"input-required-result-unsupported-methods", "input-required-result-ignore-extra-params",
		"input-required-result-validate-input", "tasks-status-notifications",
		"server-stateless", "caching", "http-header-validation", "http-custom-header-server-validation",
	}

	// mcpNextViaTokenProxy are the scenarios whose raw requests go to the
	// URL's path only, without its query (the token) and without an
	// Authorization header, so they reach the server through tokenProxy.
	mcpNextViaTokenProxy = []string{"http-header-validation", "http-custom-header-server-validation"}

	mcpNextNotApplicable = []string{
		"completion-complete",
		"tools-call-simple-text", "tools-call-image", "tools-call-audio", "tools-call-embedded-resource",
		"tools-call-mixed-content", "tools-call-error", "tools-call-with-progress",
		"resources-read-text", "resources-read-binary", "resources-templates-read",
		"prompts-list", "prompts-get-simple", "prompts-get-with-args", "prompts-get-embedded-resource", "prompts-get-with-image",
		"input-required-result-basic-elicitation", "input-required-result-basic-sampling", "input-required-result-basic-list-roots",
		"input-required-result-request-state", "input-required-result-multiple-input-requests", "input-required-result-multi-round",
		"input-required-result-non-tool-request", "input-required-result-result-type", "input-required-result-tampered-state",
		"input-required-result-capability-check",
		"tasks-lifecycle", "tasks-capability-negotiation", "tasks-wire-fields", "tasks-request-headers",
		"tasks-request-state-removal", "tasks-mrtr-input", "tasks-dispatch-and-envelope", "tasks-required-task-error",
		"tasks-mrtr-composition", "json-schema-2020-12",
	}
)

// mcpCheck names one check of a scenario's results/checks.json: the suite
// reuses an id for several checks and a name in several scenarios, so the
// three together.
type mcpCheck struct{ scenario, id, name string }

// mcpNextExempt are the checks of mcpNextRun that do not pass against
// buildguard, each with the reason (docs/http.md#6.1 lists them). Every
// other check must pass; an exempt check that passes, or that the suite no
// longer reports, fails the lane too, so the list stays true.
var mcpNextExempt = map[mcpCheck]string{
	{"caching", "sep-2549-prompts-list-caching-hints", "PromptsListCachingHints"}: "buildguard serves no prompts: prompts/list is -32601",

	{"server-stateless", "sep-2575-server-rejects-undeclared-capability", "ServerRejectsUndeclaredCapability"}:                "needs the suite's tool test_missing_capability; no buildguard tool needs a client capability",
	{"server-stateless", "sep-2575-missing-capability-http-400", "MissingCapabilityHttp400"}:                                  "needs the suite's tool test_missing_capability; no buildguard tool needs a client capability",
	{"server-stateless", "sep-2575-http-server-no-independent-requests-on-stream", "HttpServerNoIndependentRequestsOnStream"}: "needs the suite's tool test_streaming_elicitation; buildguard never sends the client a request",
	{"server-stateless", "sep-2575-server-no-log-without-loglevel", "ServerNoLogWithoutLogLevel"}:                             "needs the suite's tool test_logging_tool; buildguard has no logging capability",

	{"http-custom-header-server-validation", "sep-2243-server-no-xmcp-tool", "HttpCustomHeaderServerNoTool"}: "no buildguard tool has an x-mcp-header argument, so no Mcp-Param header exists to validate",
	{"http-custom-header-server-validation", "sep-2243-server-decode-base64", "NotTestable"}:                 "no buildguard tool has an x-mcp-header argument",
	{"http-custom-header-server-validation", "sep-2243-server-validate-param-match", "NotTestable"}:          "no buildguard tool has an x-mcp-header argument",
	{"http-custom-header-server-validation", "sep-2243-server-reject-invalid-param-chars", "NotTestable"}:    "no buildguard tool has an x-mcp-header argument",
	{"http-custom-header-server-validation", "sep-2243-server-reject-param-mismatch", "NotTestable"}:         "no buildguard tool has an x-mcp-header argument",

	// Warnings: SHOULDs the suite can only meet with its own tools, and
	// one buildguard's error objects decline.
	{"input-required-result-ignore-extra-params", "sep-2322-ignore-unexpected-params", "IgnoreUnexpectedParams"}:                             "calls the suite's tool test_input_required_result_elicitation (unknown tool)",
	{"input-required-result-missing-input-response", "sep-2322-missing-response-rerequests", "InputRequiredResultMissingResponseRerequests"}: "calls the suite's SEP-2322 tool; buildguard never asks the client for input",
	{"sep-2164-resource-not-found", "sep-2164-data-uri", "ResourcesNotFoundDataUri"}:                                                         "buildguard's JSON-RPC errors carry no data (docs/mcp-server.md, only -32022 has data); data.uri is a SHOULD",
}

// mcpNextConformance runs the lane against the running server at url. It
// fails when a check outside mcpNextExempt fails or warns, when an exempt
// check passes or is missing, when a scenario leaves no checks.json, or
// when the requirement set names a server scenario neither list names.
func mcpNextConformance(ctx context.Context, node, url, work string) error {
	dir := filepath.Join(mcpConformanceDir, "node_modules", "conformance-next")
	listed, err := requirementScenarios(filepath.Join(dir, "requirements", "2026-07-28.yaml"))
	if err != nil {
		return err
	}
	var unknown []string
	for _, s := range listed {
		if !slices.Contains(mcpNextRun, s) && !slices.Contains(mcpNextNotApplicable, s) {
			unknown = append(unknown, s)
		}
	}
	if len(unknown) > 0 {
		return fmt.Errorf("the 2026-07-28 requirement set names server scenarios docs/http.md#6.1 does not: %s; run them or say why they do not apply", strings.Join(unknown, ", "))
	}
	proxied, stopProxy, err := tokenProxy(url)
	if err != nil {
		return err
	}
	defer stopProxy()
	suite := filepath.Join(dir, "dist", "index.js")
	var problems []string
	exempted := 0
	for _, s := range mcpNextRun {
		target := url
		if slices.Contains(mcpNextViaTokenProxy, s) {
			target = proxied
		}
		fmt.Printf("mcpConformance: 2026-07-28 scenario %s\n", s)
		out := filepath.Join(work, "results-next", s)
		sctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
		// --force: the extension scenarios (tasks-*) are not on the dated
		// timeline, and --spec-version alone would skip them with exit 0.
		cmd := exec.CommandContext(sctx, node, suite, "server", "--url", target, "--scenario", s, "--spec-version", "2026-07-28", "--force", "-o", out)
		cmd.Stdout, cmd.Stderr = os.Stdout, os.Stderr
		runErr := cmd.Run() // judged by its checks below, not by its exit
		cancel()
		checks, err := readChecks(out, "")
		if err != nil {
			problems = append(problems, fmt.Sprintf("%s: %v (the suite: %v)", s, err, runErr))
			continue
		}
		p, n := judgeChecks(s, checks, mcpNextExempt, "mcpNextExempt and docs/http.md#6.1")
		problems = append(problems, p...)
		exempted += n
	}
	if len(problems) > 0 {
		return fmt.Errorf("the 2026-07-28 lane against buildguard mcp --http (docs/http.md#6.1):\n  %s", strings.Join(problems, "\n  "))
	}
	fmt.Printf("mcpConformance: %d 2026-07-28 scenarios against buildguard mcp --http: every check passes but the %d docs/http.md#6.1 names; %d scenarios need the suite's fixtures\n",
		len(mcpNextRun), exempted, len(mcpNextNotApplicable))
	return nil
}

// mcpCheckResult is one entry of the suite's checks.json.
type mcpCheckResult struct {
	ID           string `json:"id"`
	Name         string `json:"name"`
	Status       string `json:"status"` // SUCCESS, FAILURE, WARNING, INFO, SKIPPED
	ErrorMessage string `json:"errorMessage"`
}

// readChecks reads the checks.json the suite wrote for one scenario under
// out (out/server-SCENARIO-TIMESTAMP/checks.json); dir, when not "", names
// that directory, for an out holding the results of many scenarios.
func readChecks(out, dir string) ([]mcpCheckResult, error) {
	if dir == "" {
		dir = "*"
	}
	files, err := filepath.Glob(filepath.Join(out, dir, "checks.json"))
	if err != nil {
		return nil, err
	}
	if len(files) != 1 {
		return nil, fmt.Errorf("want one checks.json under %s, found %d", out, len(files))
	}
	b, err := os.ReadFile(files[0])
	if err != nil {
		return nil, err
	}
	var checks []mcpCheckResult
	if err := json.Unmarshal(b, &checks); err != nil {
		return nil, fmt.Errorf("reading %s: %w", files[0], err)
	}
	if len(checks) == 0 {
		return nil, fmt.Errorf("%s lists no check", files[0])
	}
	return checks, nil
}

// judgeChecks returns what is wrong with one scenario's checks against
// exempt (the checks expected to fail or warn, each with its reason; where
// names the list and its page), and how many exempt checks it reported as
// expected.
func judgeChecks(scenario string, checks []mcpCheckResult, exempt map[mcpCheck]string, where string) (problems []string, exempted int) {
	seen := map[mcpCheck]bool{}
	for _, c := range checks {
		k := mcpCheck{scenario, c.ID, c.Name}
		failing := c.Status == "FAILURE" || c.Status == "WARNING"
		reason, isExempt := exempt[k]
		switch {
		case isExempt && failing:
			seen[k] = true
			exempted++
			fmt.Printf("mcpConformance:   %s %s/%s (%s): %s\n", c.Status, c.ID, c.Name, reason, c.ErrorMessage)
		case isExempt:
			seen[k] = true
			problems = append(problems, fmt.Sprintf("%s: %s/%s is %s now; remove it from %s", scenario, c.ID, c.Name, c.Status, where))
		case failing:
			problems = append(problems, fmt.Sprintf("%s: %s/%s %s: %s", scenario, c.ID, c.Name, c.Status, c.ErrorMessage))
		}
	}
	for k := range exempt {
		if k.scenario == scenario && !seen[k] {
			problems = append(problems, fmt.Sprintf("%s: the suite no longer reports %s/%s; remove it from %s", scenario, k.id, k.name, where))
		}
	}
	slices.Sort(problems)
	return problems, exempted
}

// tokenProxy serves on a loopback port and forwards every request to
// target's host with target's token query parameter as an Authorization:
// Bearer header; the Host header becomes target's, nothing else of the
// request changes. The suite's SEP-2243 scenarios send their raw requests
// to the URL's path without its query and with headers of their own, so
// without it they would meet the 401 of docs/http.md#2 before any header
// rule. It returns the proxy's URL and a function that stops it.
func tokenProxy(target string) (string, func(), error) {
	u, err := neturl.Parse(target)
	if err != nil {
		return "", nil, err
	}
	token := u.Query().Get("token")
	if token == "" {
		return "", nil, fmt.Errorf("the server URL %s has no token parameter", u.Redacted())
	}
	base := &neturl.URL{Scheme: u.Scheme, Host: u.Host}
	proxy := &httputil.ReverseProxy{Rewrite: func(r *httputil.ProxyRequest) {
		r.SetURL(base)
		r.Out.Header.Set("Authorization", "Bearer "+token)
	}}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", nil, err
	}
	// The request's body is read whole before it is forwarded: net/http may
	// close a request's body once its handler has written the answer's
	// header, and the Transport, still reading the body for its end when a
	// quick answer starts streaming back, then sees that as a failed write
	// and closes the connection in the middle of the answer (a tools/list
	// cut off after its first 4 KiB, about 3 in 1,000 requests; the
	// suite's raw requests wait forever for such an answer's end).
	whole := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, 16<<20))
		if err != nil {
			http.Error(w, "tokenProxy: reading the request body: "+err.Error(), http.StatusBadRequest)
			return
		}
		r.Body = io.NopCloser(bytes.NewReader(body))
		proxy.ServeHTTP(w, r)
	})
	srv := &http.Server{Handler: whole, ReadHeaderTimeout: 10 * time.Second}
	done := make(chan struct{})
	go func() { defer close(done); _ = srv.Serve(ln) }()
	stop := func() {
		_ = srv.Close()
		<-done
	}
	return "http://" + ln.Addr().String() + u.Path, stop, nil
}

// requirementScenarios reads the server scenarios of a frozen requirement
// set: the `server:` list and the not_scored entries whose leg is server.
func requirementScenarios(path string) ([]string, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var names []string
	section, pending := "", ""
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		trimmed := strings.TrimSpace(line)
		switch {
		case strings.HasPrefix(line, "#") || trimmed == "":
		case !strings.HasPrefix(line, " "):
			section = strings.TrimSuffix(trimmed, ":")
		case section == "server" && strings.HasPrefix(trimmed, "- "):
			names = append(names, strings.TrimPrefix(trimmed, "- "))
		case section == "not_scored" && strings.HasPrefix(trimmed, "- scenario: "):
			pending = strings.TrimPrefix(trimmed, "- scenario: ")
		case section == "not_scored" && trimmed == "leg: server" && pending != "":
			names = append(names, pending)
			pending = ""
		}
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	if len(names) == 0 {
		return nil, fmt.Errorf("%s names no server scenario", path)
	}
	return names, nil
}
