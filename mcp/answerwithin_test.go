//go:build unix

package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	sdkmcp "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/buildguard/buildguard/harness/mcptest"
	"github.com/buildguard/buildguard/internal/testsupport/wait"
	"github.com/buildguard/buildguard/mcp/protocol"
	"github.com/buildguard/buildguard/service/safebuild"
	"github.com/buildguard/buildguard/service/tools"
	"github.com/buildguard/buildguard/service/tools/toolstest"
)

// The gated builds of the tests of answerWithinMs: each records its pid,
// prints a line every 0.1 s until the test creates the file go, takes it
// away for the next build, then compiles (gatedOK) or fails (gatedFail).
const (
	gateWait  = `echo "$$" > pids.tmp; mv pids.tmp pids; i=0; while [ ! -f go ]; do i=$((i+1)); echo "waiting $i"; sleep 0.1; done; rm -f go; `
	gatedOK   = gateWait + `mkdir -p out/app; printf 'bytes-%s' "$$" > out/app/Main.class; echo BUILD SUCCESSFUL`
	gatedFail = gateWait + `echo "B.java:3: error: cannot find symbol missingSymbol" >&2; exit 1`
)

var waitingLine = regexp.MustCompile(`(?m)^waiting \d+\n`)

var buildIDPattern = regexp.MustCompile(`^[0-9a-f]{32}$`)

// newGatedProject is a build project whose builds are ok (gatedOK), fail
// (gatedFail) and other (gatedOK again, a second build), served by a
// service made with deps (its Base and grace filled in), stopped at the
// end of the test.
func newGatedProject(t *testing.T, deps tools.Deps) *gatedProject {
	t.Helper()
	p := &gatedProject{mcptest.NewBuildProject(t, map[string]string{"ok": gatedOK})}
	cfg := map[string]any{"defaultBuild": "ok", "builds": map[string]any{
		"ok":    map[string]any{"command": []string{"sh", "-c", gatedOK}, "timeoutSeconds": 120},
		"other": map[string]any{"command": []string{"sh", "-c", gatedOK}, "timeoutSeconds": 120},
		"fail":  map[string]any{"command": []string{"sh", "-c", gatedFail}, "timeoutSeconds": 120},
	}}
	data, _ := json.Marshal(cfg)
	if err := os.WriteFile(filepath.Join(p.Dir, safebuild.ConfigFile), data, 0o644); err != nil {
		t.Fatal(err)
	}
	deps.Base, deps.BuildGrace, deps.VerifyWait = p.Dir, 500*time.Millisecond, 5*time.Second
	p.Svc = tools.NewService(deps)
	t.Cleanup(p.Svc.Stop)
	return p
}

// gatedProject is a build project whose builds wait for a file named go.
type gatedProject struct{ *mcptest.BuildProject }

// open lets the project's waiting build go on.
func (p *gatedProject) open(t *testing.T) {
	t.Helper()
	if err := os.WriteFile(filepath.Join(p.Dir, "go"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
}

// runningPIDs waits for the pid of the gated build now running, and takes
// its file away for the next build.
func (p *gatedProject) runningPIDs(t *testing.T) []int {
	t.Helper()
	pids := wait.PIDFile(t, 20*time.Second, filepath.Join(p.Dir, "pids"))
	os.Remove(filepath.Join(p.Dir, "pids"))
	return pids
}

func callSafeBuild(t *testing.T, ctx context.Context, cs *sdkmcp.ClientSession, args map[string]any, token string) (*sdkmcp.CallToolResult, error) {
	t.Helper()
	params := &sdkmcp.CallToolParams{Name: tools.ToolSafeBuild, Arguments: args}
	if token != "" {
		params.SetProgressToken(token)
	}
	return cs.CallTool(ctx, params)
}

// mustRun calls the safe build and requires an answer; it returns the
// structured result too.
func mustRun(t *testing.T, cs *sdkmcp.ClientSession, args map[string]any) (*sdkmcp.CallToolResult, map[string]any) {
	t.Helper()
	res, err := callSafeBuild(t, context.Background(), cs, args, "")
	if err != nil {
		t.Fatalf("reclazz_safe_build %v: %v", args, err)
	}
	return res, structured(t, res)
}

// requireRunning checks a running answer: not an error, valid against the
// output schema, with a build id that its text names with resume; it
// returns the id.
func requireRunning(t *testing.T, res *sdkmcp.CallToolResult, m map[string]any) string {
	t.Helper()
	id, _ := m["buildId"].(string)
	if res.IsError || m["outcome"] != "running" || !buildIDPattern.MatchString(id) {
		t.Fatalf("want a running answer with a buildId, got isError %v: %v", res.IsError, m)
	}
	raw, _ := json.Marshal(res.StructuredContent)
	if err := toolstest.Validate(tools.ToolSafeBuild, raw); err != nil {
		t.Errorf("running result does not validate: %v\n%s", err, raw)
	}
	text := res.Content[0].(*sdkmcp.TextContent).Text
	if !strings.Contains(text, `resume "`+id+`"`) || !strings.Contains(m["detail"].(string), `resume "`+id+`"`) {
		t.Errorf("the answer does not say how to resume %s:\n%s\n%v", id, text, m["detail"])
	}
	return id
}

// resumeUntilDone resumes build id until its answer is not running,
// within a minute.
func resumeUntilDone(t *testing.T, cs *sdkmcp.ClientSession, id string) (*sdkmcp.CallToolResult, map[string]any) {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for {
		res, m := mustRun(t, cs, map[string]any{"resume": id, "answerWithinMs": "1000"})
		if m["outcome"] != "running" {
			return res, m
		}
		if m["buildId"] != id {
			t.Fatalf("resume of %s answered running for %v", id, m["buildId"])
		}
		if time.Now().After(deadline) {
			t.Fatalf("build %s still running after a minute of resumes", id)
		}
	}
}

func alive(pids []int) bool {
	for _, pid := range pids {
		if syscall.Kill(pid, 0) == nil {
			return true
		}
	}
	return false
}

// TestSafeBuildAnswersRunningThenResumes: a build longer than
// answerWithinMs answers running with its id and goes on without the
// call; a resume that is cancelled leaves it running; a resume before its
// end answers running again, naming its log; once it ends, resume returns
// its result, ok with the bytes proven, and the agent got BUILD ok and
// never BUILD failed; the result stays readable, the same each time.
func TestSafeBuildAnswersRunningThenResumes(t *testing.T) {
	t.Parallel()
	for transport, connect := range map[string]func(*testing.T, Caller, string, *sdkmcp.ClientOptions) *sdkmcp.ClientSession{
		"stdio": connectSDKClientWith,
		"http":  connectSDKClientHTTP,
	} {
		t.Run(transport, func(t *testing.T) {
			t.Parallel()
			testAnswersRunningThenResumes(t, connect)
		})
	}
}

func testAnswersRunningThenResumes(t *testing.T, connect func(*testing.T, Caller, string, *sdkmcp.ClientOptions) *sdkmcp.ClientSession) {
	p := newGatedProject(t, tools.Deps{})
	var mu sync.Mutex
	progress := map[string]int{}
	heard := make(chan string, 64)
	cs := connect(t, p.Svc, protocol.Version20251125, &sdkmcp.ClientOptions{
		ProgressNotificationHandler: func(_ context.Context, req *sdkmcp.ProgressNotificationClientRequest) {
			tok, _ := req.Params.ProgressToken.(string)
			mu.Lock()
			progress[tok]++
			mu.Unlock()
			select {
			case heard <- tok:
			default:
			}
		},
	})
	first, err := callSafeBuild(t, context.Background(), cs, map[string]any{"answerWithinMs": "1000"}, "first")
	if err != nil {
		t.Fatal(err)
	}
	id := requireRunning(t, first, structured(t, first))
	pids := p.runningPIDs(t)
	mu.Lock()
	fromFirst := progress["first"]
	mu.Unlock()

	// A resume whose call is cancelled while it waits: the build goes on.
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	errc := make(chan error, 1)
	go func() {
		_, err := callSafeBuild(t, ctx, cs, map[string]any{"resume": id, "answerWithinMs": "600000"}, "resumer")
		errc <- err
	}()
	for tok := ""; tok != "resumer"; {
		select {
		case tok = <-heard:
		case <-time.After(20 * time.Second):
			t.Fatal("the resuming call got no progress of the build within 20s")
		}
	}
	cancel()
	if err := <-errc; !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled resume returned %v", err)
	}
	res, m := mustRun(t, cs, map[string]any{"resume": id, "answerWithinMs": "1000"})
	if requireRunning(t, res, m) != id {
		t.Fatalf("resume answered running for another build: %v", m)
	}
	out := m["output"].(map[string]any)
	if logFile, _ := out["logFile"].(string); !strings.HasPrefix(logFile, filepath.Join(p.Dir, ".buildguard", "logs")) || out["lines"].(float64) < 1 {
		t.Errorf("a running build's answer does not say where its log is: %v", out)
	}
	if !alive(pids) || p.Agent.Received("BUILD failed request=") || p.Agent.Received("BUILD ok request=") {
		t.Fatalf("the build did not go on after its calls ended: alive %v, agent %q", alive(pids), p.Agent.Commands())
	}

	p.open(t)
	res, m = resumeUntilDone(t, cs, id)
	if res.IsError || m["outcome"] != "ok" || m["buildId"] != nil {
		t.Fatalf("resumed result: %v", m)
	}
	validateOutput(t, tools.ToolSafeBuild, res)
	if cc := m["changedClasses"].(map[string]any); cc["allApplied"] != true {
		t.Errorf("changedClasses %v", cc)
	}
	if !p.Agent.Received("BUILD ok request=") || p.Agent.Received("BUILD failed request=") {
		t.Errorf("agent commands %q, want BUILD ok and no BUILD failed", p.Agent.Commands())
	}
	again, _ := mustRun(t, cs, map[string]any{"resume": id})
	a, b := mustJSON(t, res), mustJSON(t, again)
	if a != b {
		t.Errorf("a second resume differs:\n%s\n%s", a, b)
	}
	mu.Lock()
	defer mu.Unlock()
	if progress["first"] != fromFirst {
		t.Errorf("the first call got %d progress notifications after it answered", progress["first"]-fromFirst)
	}
}

func mustJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestSafeBuildResumedResultIsTheDirectOne: the result a resume returns is
// the answer the call that started the build would have given: for a
// failed build, the same structured result, text and log link as a direct
// call's, but for the log's name, the duration and the lines the build
// printed while it waited for the test.
func TestSafeBuildResumedResultIsTheDirectOne(t *testing.T) {
	t.Parallel()
	p := newGatedProject(t, tools.Deps{})
	cs := connectSDKClient(t, p.Svc, protocol.Version20251125)
	p.open(t)
	direct, dm := mustRun(t, cs, map[string]any{"build": "fail"})
	first, fm := mustRun(t, cs, map[string]any{"build": "fail", "answerWithinMs": "1000"})
	id := requireRunning(t, first, fm)
	p.open(t)
	resumed, rm := resumeUntilDone(t, cs, id)
	normal := func(res *sdkmcp.CallToolResult, m map[string]any) string {
		out := m["output"].(map[string]any)
		logFile := out["logFile"].(string)
		out["logFile"], m["durationMs"] = "LOG", 0
		// The build waited for the test as long as it was let: the
		// lines it printed meanwhile are the one difference of the output.
		tail := out["tail"].(string)
		waited := waitingLine.FindAllStringIndex(tail, -1)
		out["tail"], out["lines"] = waitingLine.ReplaceAllString(tail, ""), out["lines"].(float64)-float64(len(waited))
		var parts []string
		for _, c := range res.Content {
			switch c := c.(type) {
			case *sdkmcp.TextContent:
				parts = append(parts, strings.ReplaceAll(c.Text, logFile, "LOG"))
			case *sdkmcp.ResourceLink:
				if c.URI != tools.LogURI(logFile) || c.Name != filepath.Base(logFile) {
					t.Errorf("link %+v does not name %s", c, logFile)
				}
				parts = append(parts, c.Description+" "+c.MIMEType)
			}
		}
		return mustJSON(t, map[string]any{"isError": res.IsError, "structured": m, "content": parts})
	}
	if dm["outcome"] != "failed" || rm["outcome"] != "failed" {
		t.Fatalf("outcomes %v and %v, want failed", dm["outcome"], rm["outcome"])
	}
	if a, b := normal(direct, dm), normal(resumed, rm); a != b {
		t.Errorf("the resumed result differs from the direct one:\ndirect:  %s\nresumed: %s", a, b)
	}
}

// TestSafeBuildResumeArgumentErrors: an unknown build id, a resume that
// is not a string and an answerWithinMs out of range are argument errors
// that say what to do, and run nothing.
func TestSafeBuildResumeArgumentErrors(t *testing.T) {
	t.Parallel()
	p := newGatedProject(t, tools.Deps{})
	for _, version := range []string{protocol.Version20250618, protocol.Version20251125} {
		cs := connectSDKClient(t, p.Svc, version)
		for _, c := range []struct {
			args map[string]any
			want string
		}{
			{map[string]any{"resume": "0123456789abcdef0123456789abcdef"}, `resume "0123456789abcdef0123456789abcdef" names no build of this server`},
			{map[string]any{"resume": strings.Repeat("x", 65)}, "resume must be the buildId of a running result"},
			{map[string]any{"resume": 7}, "resume must be the buildId of a running result"},
			{map[string]any{"answerWithinMs": "999"}, "answerWithinMs must be an integer string between 1000 and 600000"},
			{map[string]any{"answerWithinMs": "600001"}, "answerWithinMs must be an integer string between 1000 and 600000"},
		} {
			res, err := callSafeBuild(t, context.Background(), cs, c.args, "")
			var msg string
			switch {
			case version == protocol.Version20250618:
				if !isInvalidParams(err) {
					t.Fatalf("%s %v: want -32602, got %v %v", version, c.args, err, res)
				}
				msg = err.Error()
			case err != nil || !res.IsError:
				t.Fatalf("%s %v: want an isError result, got %v %v", version, c.args, err, res)
			default:
				msg = res.Content[0].(*sdkmcp.TextContent).Text
			}
			if !strings.Contains(msg, c.want) {
				t.Errorf("%s %v: %q, want it to say %q", version, c.args, msg, c.want)
			}
			if strings.Contains(c.want, "names no build") && !strings.Contains(msg, "without resume to build again") {
				t.Errorf("the unknown build's error does not say what to do: %q", msg)
			}
		}
	}
	if p.Agent.Received("BUILD started") {
		t.Errorf("an argument error asked for a hold: %q", p.Agent.Commands())
	}
}

// TestSafeBuildAnswerWithinDefault: the service's AnswerWithin (the
// server's --answer-within) answers a call without answerWithinMs running
// too, and a resume without it waits as long again; a call that runs as a
// task never answers running (docs/decisions.md#D17 unchanged).
func TestSafeBuildAnswerWithinDefault(t *testing.T) {
	t.Parallel()
	p := newGatedProject(t, tools.Deps{AnswerWithin: time.Second})
	cs := connectSDKClient(t, p.Svc, protocol.Version20251125)
	res, m := mustRun(t, cs, map[string]any{})
	id := requireRunning(t, res, m)
	p.runningPIDs(t)
	res, m = mustRun(t, cs, map[string]any{"resume": id})
	requireRunning(t, res, m)
	p.open(t)
	if res, m = resumeUntilDone(t, cs, id); res.IsError || m["outcome"] != "ok" {
		t.Fatalf("resumed: %v", m)
	}

	_, c := startHTTPTasks(t, p.Svc)
	created, code := c.call("tools/call", safeBuild(true))
	if code != 0 {
		t.Fatalf("reclazz_safe_build as a task: error %d", code)
	}
	p.runningPIDs(t)
	// The task's build prints a line every 0.1 s from its start: once it
	// printed its 15th, the default's second has passed since the call, and
	// the task is still working, not completed with a running answer.
	wait.For(t, 30*time.Second, "the task's build to print its 15th line", func() bool {
		res, _ := c.call("tasks/get", taskParams(str(created["taskId"]), true))
		if str(res["status"]) != "working" {
			t.Fatalf("task before its build ended: %s", mustJSON(t, res))
		}
		var n int
		_, err := fmt.Sscanf(str(res["statusMessage"]), "waiting %d", &n)
		return err == nil && n >= 15
	})
	p.open(t)
	done, _ := pollTask(t, c, str(created["taskId"]))
	if str(done["status"]) != "completed" || !strings.Contains(string(done["result"]), `"outcome":"ok"`) {
		t.Fatalf("task: %s", mustJSON(t, done))
	}
}

// TestSafeBuildKeptResultsBounded: the results of builds that went on
// without their call are bounded in count (the earliest finished goes
// when a new build needs room) and in time after their end.
func TestSafeBuildKeptResultsBounded(t *testing.T) {
	t.Parallel()
	t.Run("count", func(t *testing.T) {
		t.Parallel()
		p := newGatedProject(t, tools.Deps{KeptBuilds: 1})
		cs := connectSDKClient(t, p.Svc, protocol.Version20251125)
		res, m := mustRun(t, cs, map[string]any{"answerWithinMs": "1000"})
		first := requireRunning(t, res, m)
		p.open(t)
		if _, m := resumeUntilDone(t, cs, first); m["outcome"] != "ok" {
			t.Fatalf("first: %v", m)
		}
		res, m = mustRun(t, cs, map[string]any{"build": "other", "answerWithinMs": "1000"})
		second := requireRunning(t, res, m)
		if res, _ := callSafeBuild(t, context.Background(), cs, map[string]any{"resume": first}, ""); !res.IsError ||
			!strings.Contains(res.Content[0].(*sdkmcp.TextContent).Text, "names no build of this server") {
			t.Errorf("the first build's result outlived the bound of 1: %v", res.Content[0])
		}
		p.open(t)
		if _, m := resumeUntilDone(t, cs, second); m["outcome"] != "ok" {
			t.Fatalf("second: %v", m)
		}
	})
	t.Run("time", func(t *testing.T) {
		t.Parallel()
		p := newGatedProject(t, tools.Deps{KeepResult: time.Nanosecond})
		heard := make(chan struct{}, 1)
		cs := connectSDKClientWith(t, p.Svc, protocol.Version20251125, &sdkmcp.ClientOptions{
			ProgressNotificationHandler: func(context.Context, *sdkmcp.ProgressNotificationClientRequest) {
				select {
				case heard <- struct{}{}:
				default:
				}
			},
		})
		res, m := mustRun(t, cs, map[string]any{"answerWithinMs": "1000"})
		id := requireRunning(t, res, m)
		// A resume that waits when the build ends gets its result, however
		// short the time a result is kept after it.
		resumed := make(chan map[string]any, 1)
		go func() {
			res, err := callSafeBuild(t, context.Background(), cs, map[string]any{"resume": id, "answerWithinMs": "600000"}, "r")
			if err != nil {
				t.Error(err)
			}
			resumed <- structured(t, res)
		}()
		select {
		case <-heard:
		case <-time.After(20 * time.Second):
			t.Fatal("the resume got no progress within 20s")
		}
		p.open(t)
		if m := <-resumed; m["outcome"] != "ok" {
			t.Fatalf("resumed: %v", m)
		}
		if res, _ := callSafeBuild(t, context.Background(), cs, map[string]any{"resume": id}, ""); !res.IsError ||
			!strings.Contains(res.Content[0].(*sdkmcp.TextContent).Text, "names no build of this server") {
			t.Errorf("the result outlived its time: %v", res.Content[0])
		}
	})
}

// TestSafeBuildManyResumes: many calls resume one build at once, some
// waiting for its end and some racing it; every one answers running or
// the one result, the same for all, and the build ran once.
func TestSafeBuildManyResumes(t *testing.T) {
	t.Parallel()
	p := newGatedProject(t, tools.Deps{})
	cs := connectSDKClient(t, p.Svc, protocol.Version20251125)
	res, m := mustRun(t, cs, map[string]any{"answerWithinMs": "1000"})
	id := requireRunning(t, res, m)
	p.runningPIDs(t)
	const waiting, racing = 8, 8
	results := make(chan string, waiting+racing)
	var wg sync.WaitGroup
	resume := func(within string) {
		defer wg.Done()
		for {
			res, err := callSafeBuild(t, context.Background(), cs, map[string]any{"resume": id, "answerWithinMs": within}, "")
			if err != nil {
				t.Error(err)
				return
			}
			if m := structured(t, res); m["outcome"] != "running" {
				results <- mustJSON(t, res)
				return
			}
		}
	}
	for range waiting {
		wg.Add(1)
		go resume("600000")
	}
	p.open(t)
	for range racing {
		wg.Add(1)
		go resume("1000")
	}
	wg.Wait()
	close(results)
	var want string
	n := 0
	for got := range results {
		if n++; want == "" {
			want = got
		}
		if got != want {
			t.Errorf("resumes differ:\n%s\n%s", got, want)
		}
	}
	if n != waiting+racing || !strings.Contains(want, `"outcome":"ok"`) {
		t.Fatalf("%d results, want %d ok: %s", n, waiting+racing, want)
	}
	if c := strings.Count(strings.Join(p.Agent.Commands(), "\n"), "BUILD started"); c != 1 {
		t.Errorf("%d builds ran, want 1", c)
	}
}

// TestSafeBuildStopEndsDetachedBuilds: stopping the service (the server
// stopping) ends a build that goes on without its call as it ends every
// build: its processes gone, BUILD failed acknowledged, and its result,
// cancelled, still readable.
func TestSafeBuildStopEndsDetachedBuilds(t *testing.T) {
	t.Parallel()
	p := newGatedProject(t, tools.Deps{})
	cs := connectSDKClient(t, p.Svc, protocol.Version20251125)
	res, m := mustRun(t, cs, map[string]any{"answerWithinMs": "1000"})
	id := requireRunning(t, res, m)
	pids := p.runningPIDs(t)
	p.Svc.Stop()
	if alive(pids) {
		t.Errorf("the build's processes %v outlived Stop", pids)
	}
	if !p.Agent.Received("BUILD failed request=") {
		t.Errorf("BUILD failed not sent before Stop returned: %q", p.Agent.Commands())
	}
	res, m = mustRun(t, cs, map[string]any{"resume": id})
	if !res.IsError || m["outcome"] != "cancelled" {
		t.Errorf("the stopped build's result: %v", m)
	}
}
