//go:build unix

package acceptance

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"

	sdkmcp "github.com/modelcontextprotocol/go-sdk/mcp"
)

// recordedBuild is the lane's ordinary build wrapped so that it records its
// start and end (unix ns) in queueRecord: the evidence that the runs never
// overlapped.
const (
	recordedBuild = "recorded"
	queueRecord   = "queue-record.log"
)

// writeRecordedConfig adds the recorded build to the project's
// .buildguard.json, next to the lane's ordinary build.
func writeRecordedConfig(p project, t tools) error {
	argv := ordinaryBuild(p, t).argv
	script := `echo "start $(date +%s%N)" >> ` + queueRecord + `; "$@"; rc=$?; echo "end $(date +%s%N)" >> ` + queueRecord + `; exit $rc`
	timeout := int(stepTimeout.Seconds())
	cfg := map[string]any{
		"builds": map[string]any{
			oneCallBuild:  map[string]any{"command": argv, "timeoutSeconds": timeout},
			recordedBuild: map[string]any{"command": append([]string{"sh", "-c", script, "sh"}, argv...), "timeoutSeconds": timeout},
		},
		"defaultBuild": oneCallBuild,
	}
	data, err := json.MarshalIndent(cfg, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(p.root, ".buildguard.json"), data, 0o644)
}

// queuedResult is one caller's result as JSON, or why there is none.
type queuedResult struct {
	caller string
	raw    []byte
	err    error
}

// mcpCall runs `buildguard mcp` in the project, as a host would, and asks
// it once for the recorded build; its stderr goes to logPath.
func (r *laneRun) mcpCall(ctx context.Context, caller, logPath string) queuedResult {
	logf, err := os.OpenFile(logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return queuedResult{caller: caller, err: err}
	}
	defer logf.Close()
	cmd := exec.Command(r.tools.buildguard, "mcp", "--project-dir", r.p.root, "--port-file", "agent.port")
	cmd.Stderr = logf
	client := sdkmcp.NewClient(&sdkmcp.Implementation{Name: "acceptance-" + caller, Version: "1"}, &sdkmcp.ClientOptions{
		ProgressNotificationHandler: func(_ context.Context, req *sdkmcp.ProgressNotificationClientRequest) {
			fmt.Fprintf(logf, "# progress %v: %s\n", req.Params.Progress, req.Params.Message)
		},
	})
	cs, err := client.Connect(ctx, &sdkmcp.CommandTransport{Command: cmd, TerminateDuration: cancelGrace}, nil)
	if err != nil {
		return queuedResult{caller: caller, err: fmt.Errorf("starting buildguard mcp: %w", err)}
	}
	defer cs.Close()
	params := &sdkmcp.CallToolParams{Name: "reclazz_safe_build", Arguments: map[string]any{"build": recordedBuild}}
	params.SetProgressToken(caller)
	res, err := cs.CallTool(ctx, params)
	if err != nil {
		return queuedResult{caller: caller, err: fmt.Errorf("calling reclazz_safe_build: %w", err)}
	}
	raw, err := json.Marshal(res.StructuredContent)
	fmt.Fprintf(logf, "# result %s\n", raw)
	return queuedResult{caller: caller, raw: raw, err: err}
}

// buildRun runs `buildguard build run` of the recorded build in the project,
// as a person at a terminal would; its stderr goes to logPath.
func (r *laneRun) buildRun(ctx context.Context, caller, logPath string) queuedResult {
	logf, err := os.OpenFile(logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return queuedResult{caller: caller, err: err}
	}
	defer logf.Close()
	cmd := exec.CommandContext(ctx, r.tools.buildguard, "build", "run", recordedBuild, "--port-file", "agent.port")
	cmd.Dir = r.p.root
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, logf
	err = cmd.Run()
	fmt.Fprintf(logf, "# result %s", out.Bytes())
	if _, isExit := err.(*exec.ExitError); err != nil && !isExit {
		return queuedResult{caller: caller, err: err}
	}
	return queuedResult{caller: caller, raw: bytes.TrimSpace(out.Bytes())}
}

// readRecord reads the starts and ends the recorded build wrote.
func readRecord(root string) ([]QueueRun, error) {
	data, err := os.ReadFile(filepath.Join(root, queueRecord))
	if err != nil {
		return nil, err
	}
	var runs []QueueRun
	for _, line := range strings.Split(strings.TrimSpace(string(data)), "\n") {
		kind, ns, _ := strings.Cut(line, " ")
		v, err := strconv.ParseInt(ns, 10, 64)
		if err != nil {
			return nil, fmt.Errorf("record line %q: %w", line, err)
		}
		switch {
		case kind == "start" && (len(runs) == 0 || runs[len(runs)-1].EndNs != 0):
			runs = append(runs, QueueRun{StartNs: v})
		case kind == "end" && len(runs) > 0 && runs[len(runs)-1].EndNs == 0:
			runs[len(runs)-1].EndNs = v
		default:
			return nil, fmt.Errorf("two builds overlapped: %q follows an unfinished run", line)
		}
	}
	return runs, nil
}

// 10. queued-builds: two MCP clients in separate `buildguard mcp` processes
// and one terminal `buildguard build run` ask for builds of the project at
// once (docs/decisions.md#D18): none is refused, all complete in turn, the
// runs never overlap, and the JVM ends with the last good bytes.
func (r *laneRun) queuedBuilds(ctx context.Context) error {
	r.log = r.p.log("10-queued-mcp-1.log")
	if err := writeRecordedConfig(r.p, r.tools); err != nil {
		return r.fail(err, "writing .buildguard.json")
	}
	if err := setSources(r.p, sourceVersion{a: 7, b: 7}); err != nil {
		return r.fail(err, "writing v7 sources")
	}
	ctx, cancel := context.WithTimeout(ctx, 3*stepTimeout)
	defer cancel()
	results := make(chan queuedResult, 3)
	go func() { results <- r.mcpCall(ctx, "mcp-1", r.p.log("10-queued-mcp-1.log")) }()
	go func() { results <- r.mcpCall(ctx, "mcp-2", r.p.log("10-queued-mcp-2.log")) }()
	go func() { results <- r.buildRun(ctx, "build-run", r.p.log("10-queued-build-run.log")) }()
	var ev QueueEvidence
	var failure error
	for range 3 {
		q := <-results
		var res struct {
			Outcome    string `json:"outcome"`
			DurationMs int64  `json:"durationMs"`
			Detail     string `json:"detail"`
		}
		if q.err == nil {
			q.err = json.Unmarshal(q.raw, &res)
		}
		switch {
		case q.err != nil && failure == nil:
			failure = r.fail(q.err, "%s", q.caller)
		case res.Outcome != "ok" && failure == nil:
			failure = r.fail(nil, "%s must end ok (never refused or overlapped for another build); got %s", q.caller, q.raw)
		}
		ev.Callers = append(ev.Callers, QueueCaller{Caller: q.caller, Outcome: res.Outcome, DurationMs: res.DurationMs, Detail: res.Detail})
	}
	if failure != nil {
		return failure
	}
	runs, err := readRecord(r.p.root)
	if err != nil {
		return r.fail(err, "reading %s", queueRecord)
	}
	if len(runs) == 0 || len(runs) > 3 || runs[len(runs)-1].EndNs == 0 {
		return r.fail(nil, "the recorded build must have run one to three times, each to its end; got %v", runs)
	}
	ev.Runs = runs
	if err := r.app.waitFor(ctx, "VALUES=7:7"); err != nil {
		r.log = r.app.log
		return r.fail(err, "the application must print VALUES=7:7")
	}
	for name, path := range map[string]string{"A": r.p.classA(), "B": r.p.classB()} {
		built, err := r.sha(path)
		if err != nil {
			return err
		}
		rc, err := r.agent.verify(ctx, name, built)
		if err != nil || rc.status != "applied" {
			return r.fail(err, "VERIFY %s of the last built bytes must be applied; got %q", name, rc.status)
		}
	}
	if _, err := r.expectHold(ctx, "none"); err != nil {
		return err
	}
	r.queue = &ev
	return nil
}
