//go:build unix

package acceptance

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"time"

	sdkmcp "github.com/modelcontextprotocol/go-sdk/mcp"
)

// oneCallBuild is the name of the lane's build in its .buildguard.json.
const oneCallBuild = "compile"

// writeBuildConfig names the lane's ordinary build in the project's
// .buildguard.json (docs/safe-build.md#2): the command an agent may run.
func writeBuildConfig(p project, t tools) error {
	cfg := map[string]any{
		"$schema":      "docs/buildguard.schema.json",
		"builds":       map[string]any{oneCallBuild: map[string]any{"command": ordinaryBuild(p, t).argv, "timeoutSeconds": int(stepTimeout / time.Second)}},
		"defaultBuild": oneCallBuild,
	}
	data, err := json.MarshalIndent(cfg, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(p.root, ".buildguard.json"), data, 0o644)
}

// safeBuildCall is one reclazz_safe_build call through `buildguard mcp`
// (started as a host would, by the go-sdk client), with a progress token.
type safeBuildCall struct {
	result   map[string]any
	raw      json.RawMessage
	isError  bool
	progress int
	text     string // the first text content
}

// callSafeBuild starts `buildguard mcp --project-dir ROOT --port-file
// agent.port`, calls reclazz_safe_build once with a progress token and
// returns its structured result; its stderr goes to the scenario's log.
func (r *laneRun) callSafeBuild(ctx context.Context, logName string) (*safeBuildCall, error) {
	r.log = r.p.log(logName)
	logf, err := os.OpenFile(r.log, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return nil, r.fail(err, "opening the log")
	}
	defer logf.Close()
	ctx, cancel := context.WithTimeout(ctx, stepTimeout)
	defer cancel()
	cmd := exec.Command(r.tools.buildguard, "mcp", "--project-dir", r.p.root, "--port-file", "agent.port")
	cmd.Stderr = logf
	var mu sync.Mutex
	call := &safeBuildCall{}
	client := sdkmcp.NewClient(&sdkmcp.Implementation{Name: "acceptance", Version: "1"}, &sdkmcp.ClientOptions{
		ProgressNotificationHandler: func(_ context.Context, req *sdkmcp.ProgressNotificationClientRequest) {
			mu.Lock()
			call.progress++
			mu.Unlock()
			fmt.Fprintf(logf, "# progress %v: %s\n", req.Params.Progress, req.Params.Message)
		},
	})
	cs, err := client.Connect(ctx, &sdkmcp.CommandTransport{Command: cmd, TerminateDuration: cancelGrace}, nil)
	if err != nil {
		return nil, r.fail(err, "starting buildguard mcp")
	}
	defer cs.Close()
	params := &sdkmcp.CallToolParams{Name: "reclazz_safe_build", Arguments: map[string]any{}}
	params.SetProgressToken("acceptance-" + string(r.p.lane))
	res, err := cs.CallTool(ctx, params)
	if err != nil {
		return nil, r.fail(err, "calling reclazz_safe_build")
	}
	mu.Lock()
	defer mu.Unlock()
	call.isError = res.IsError
	if len(res.Content) > 0 {
		if t, ok := res.Content[0].(*sdkmcp.TextContent); ok {
			call.text = t.Text
		}
	}
	if call.raw, err = json.Marshal(res.StructuredContent); err != nil {
		return nil, r.fail(err, "reading the result")
	}
	if err := json.Unmarshal(call.raw, &call.result); err != nil {
		return nil, r.fail(err, "reading the result %s", call.raw)
	}
	fmt.Fprintf(logf, "# result %s\n", call.raw)
	return call, nil
}

// changedClass is one entry of a result's changedClasses.classes.
type changedClass struct {
	ClassName, SHA256, Status string
}

func (c *safeBuildCall) changed() (count int, allApplied bool, classes []changedClass) {
	cc, _ := c.result["changedClasses"].(map[string]any)
	n, _ := cc["count"].(float64)
	all, _ := cc["allApplied"].(bool)
	list, _ := cc["classes"].([]any)
	for _, e := range list {
		m, _ := e.(map[string]any)
		name, _ := m["className"].(string)
		sum, _ := m["sha256"].(string)
		st, _ := m["status"].(string)
		classes = append(classes, changedClass{name, sum, st})
	}
	return int(n), all, classes
}

// 8. one-call-good-change: the agent-facing tool builds the fixed two-module
// project in one call; every changed class is applied with exactly the
// bytes the build wrote, progress came before the result, and the live
// application shows the new values.
func (r *laneRun) oneCallGoodChange(ctx context.Context) error {
	if err := writeBuildConfig(r.p, r.tools); err != nil {
		return r.fail(err, "writing .buildguard.json")
	}
	if err := setSources(r.p, sourceVersion{a: 5, b: 5}); err != nil {
		return r.fail(err, "writing v5 sources")
	}
	call, err := r.callSafeBuild(ctx, "08-one-call-good.log")
	if err != nil {
		return err
	}
	if call.isError || call.result["outcome"] != "ok" || call.result["exitCode"] != 0.0 {
		return r.fail(nil, "reclazz_safe_build must end ok with exit 0 and isError false; got %s", call.raw)
	}
	if call.progress == 0 {
		return r.fail(nil, "no progress notification came before the result")
	}
	count, all, classes := call.changed()
	if count != 2 || !all || len(classes) != 2 {
		return r.fail(nil, "changedClasses must list A and B, all applied; got %s", call.raw)
	}
	for _, c := range classes {
		path := map[string]string{"A": r.p.classA(), "B": r.p.classB()}[c.ClassName]
		if path == "" {
			return r.fail(nil, "changedClasses names %q, want A and B", c.ClassName)
		}
		built, err := r.sha(path)
		if err != nil {
			return err
		}
		if c.SHA256 != built || c.Status != "applied" {
			return r.fail(nil, "changed class %s: sha256 %s status %s, want the built bytes %s applied", c.ClassName, c.SHA256, c.Status, built)
		}
		rc, err := r.agent.verify(ctx, c.ClassName, built)
		if err != nil || rc.status != "applied" || rc.sessionID != r.session {
			return r.fail(err, "VERIFY %s of the built bytes must be applied in the reference session; got %q in %q", c.ClassName, rc.status, rc.sessionID)
		}
	}
	if err := r.app.waitFor(ctx, "VALUES=5:5"); err != nil {
		r.log = r.app.log
		return r.fail(err, "the application must print VALUES=5:5")
	}
	if _, err := r.expectHold(ctx, "none"); err != nil {
		return err
	}
	r.oneCall = append(r.oneCall, OneCallResult{Scenario: LaneScenarios(r.p.lane)[r.number-1], Result: call.raw, Progress: call.progress})
	return nil
}

// 9. one-call-failing-change: module a compiles, module b does not; the one
// call reports failed, BUILD failed holds the output, and the JVM keeps
// serving the old bytes.
func (r *laneRun) oneCallFailingChange(ctx context.Context) error {
	before, err := r.sha(r.p.classA())
	if err != nil {
		return err
	}
	if err := setSources(r.p, sourceVersion{a: 6, broken: true}); err != nil {
		return r.fail(err, "writing v6 sources")
	}
	call, err := r.callSafeBuild(ctx, "09-one-call-failing.log")
	if err != nil {
		return err
	}
	if !call.isError || call.result["outcome"] != "failed" || call.result["exitCode"] == 0.0 {
		return r.fail(nil, "reclazz_safe_build of a broken module b must end failed with isError; got %s", call.raw)
	}
	out, _ := call.result["output"].(map[string]any)
	logFile, _ := out["logFile"].(string)
	if log, err := os.ReadFile(logFile); err != nil || !strings.Contains(string(log), "missingSymbol") {
		return r.fail(err, "the build's log %s must contain missingSymbol (a real compiler error)", logFile)
	}
	if !call.namesBrokenLine() {
		return r.fail(nil, "the diagnostics must name module b's broken file and line (%s:3, cannot find symbol) and the text lead with it; got %s\n%s", brokenFile, call.raw, call.text)
	}
	if count, all, _ := call.changed(); count != 0 || all {
		return r.fail(nil, "a failed build must report no changed classes; got %s", call.raw)
	}
	partial, err := r.sha(r.p.classA())
	if err != nil {
		return err
	}
	if partial == before {
		return r.fail(nil, "A.class must differ from v5 (module a compiled before b failed); it is unchanged")
	}
	select {
	case <-ctx.Done():
		return r.fail(ctx.Err(), "waiting %s after the failure", heldPause)
	case <-time.After(heldPause):
	}
	if live, err := r.app.hasLinePrefix("VALUES=6:"); err != nil {
		return r.fail(err, "reading app.log")
	} else if live {
		r.log = r.app.log
		return r.fail(nil, "app.log has a line starting VALUES=6: (the partial output went live)")
	}
	if _, err := r.expectHold(ctx, "named"); err != nil {
		return err
	}
	rc, err := r.agent.verify(ctx, "A", partial)
	if err != nil {
		return r.fail(err, "VERIFY A %s", partial)
	}
	if rc.status == "applied" {
		return r.fail(nil, "VERIFY A of the partially built bytes must not be applied, it is")
	}
	old, err := r.agent.verify(ctx, "A", before)
	if err != nil || old.status != "applied" {
		return r.fail(err, "VERIFY A of the v5 bytes must still be applied (the JVM serves the old bytes); got %q", old.status)
	}
	r.oneCall = append(r.oneCall, OneCallResult{Scenario: LaneScenarios(r.p.lane)[r.number-1], Result: call.raw, Progress: call.progress})
	return nil
}

// brokenFile is module b's source, relative to the project, as the
// diagnostics name it (docs/safe-build.md#12).
const brokenFile = "b/src/main/java/B.java"

// namesBrokenLine reports whether the result's diagnostics hold javac's
// error on line 3 of module b's source (jvm.BrokenClass returns
// missingSymbol there), and the text leads with the diagnostics: its second
// line is that error.
func (c *safeBuildCall) namesBrokenLine() bool {
	diags, _ := c.result["diagnostics"].([]any)
	found := false
	for _, d := range diags {
		m, _ := d.(map[string]any)
		msg, _ := m["message"].(string)
		if m["severity"] == "error" && m["file"] == brokenFile && m["line"] == 3.0 && strings.Contains(msg, "cannot find symbol") {
			found = true
		}
	}
	lines := strings.SplitN(c.text, "\n", 3)
	return found && len(lines) > 1 && strings.HasPrefix(lines[1], brokenFile+":3:")
}
