package mcptask

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdkmcp "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/buildguard/buildguard/internal/testsupport/wait"
)

// toolCall builds a tools/call request as the SDK hands it to middleware.
func toolCall(name string, declare bool) *sdkmcp.ServerRequest[*sdkmcp.CallToolParamsRaw] {
	p := &sdkmcp.CallToolParamsRaw{Name: name, Arguments: json.RawMessage(`{}`)}
	if declare {
		p.Meta = sdkmcp.Meta{
			sdkmcp.MetaKeyProtocolVersion:    "2026-07-28",
			sdkmcp.MetaKeyClientCapabilities: map[string]any{"extensions": map[string]any{ExtensionID: map[string]any{}}},
		}
	}
	return &sdkmcp.ServerRequest[*sdkmcp.CallToolParamsRaw]{Params: p}
}

func policyOf(m map[string]Support) Policy {
	return func(p *sdkmcp.CallToolParamsRaw) Support { return m[p.Name] }
}

type ctxKey struct{}

func TestToolCallsBecomeTasksOnlyWhenDeclared(t *testing.T) {
	store := NewStore(Config{})
	defer closeStore(t, store)
	ext := &Extension{Store: store}
	release := make(chan struct{})
	var sawValue any
	var sawRun *Run
	next := func(ctx context.Context, method string, req sdkmcp.Request) (sdkmcp.Result, error) {
		if RunFrom(ctx) != nil {
			sawValue, sawRun = ctx.Value(ctxKey{}), RunFrom(ctx)
			sawRun.Report("> Task :a:compileJava")
			<-release
		}
		return &sdkmcp.CallToolResult{Content: []sdkmcp.Content{&sdkmcp.TextContent{Text: "built"}}}, nil
	}
	h := ext.ToolCalls(policyOf(map[string]Support{"build": SupportOptional, "only_task": SupportRequired}), "waiting for the build queue")(next)

	// Without the declaration: the synchronous result, unchanged.
	res, err := h(context.Background(), "tools/call", toolCall("build", false))
	if _, ok := res.(*sdkmcp.CallToolResult); !ok || err != nil {
		t.Fatalf("undeclared call of an optional task tool = %T, %v; want the synchronous result", res, err)
	}
	// A tool without task support stays synchronous even when declared.
	if res, _ := h(context.Background(), "tools/call", toolCall("status", true)); res == nil {
		t.Fatal("no result")
	} else if _, ok := res.(*sdkmcp.CallToolResult); !ok {
		t.Errorf("declared call of a synchronous tool = %T", res)
	}
	// A required task tool without the declaration: -32021.
	if _, err := h(context.Background(), "tools/call", toolCall("only_task", false)); code(err) != CodeMissingCapability {
		t.Errorf("undeclared call of a required task tool: %v, want -32021", err)
	}

	// Declared: a task, created before the answer, outliving the request.
	reqCtx, endRequest := context.WithCancel(context.WithValue(context.Background(), ctxKey{}, "request value"))
	res, err = h(reqCtx, "tools/call", toolCall("build", true))
	if err != nil {
		t.Fatal(err)
	}
	created, ok := res.(*CreateTaskResult)
	if !ok || created.ResultType != ResultTypeTask || created.Status != StatusWorking || created.StatusMessage != "waiting for the build queue" {
		t.Fatalf("declared call = %#v", res)
	}
	b, _ := json.Marshal(created)
	var flat map[string]json.RawMessage
	_ = json.Unmarshal(b, &flat)
	for _, f := range []string{"resultType", "taskId", "status", "statusMessage", "createdAt", "lastUpdatedAt", "ttlMs", "pollIntervalMs"} {
		if _, ok := flat[f]; !ok {
			t.Errorf("CreateTaskResult lacks %q: %s", f, b)
		}
	}
	for _, f := range []string{"task", "result", "error", "inputRequests", "requestState", "content"} {
		if _, ok := flat[f]; ok {
			t.Errorf("CreateTaskResult carries %q: %s", f, b)
		}
	}
	endRequest() // the request that created the task is gone
	wait.For(t, 10*time.Second, "the progress line as statusMessage", func() bool {
		d, err := store.Get(created.TaskID)
		if err != nil || d.Status.Terminal() {
			t.Fatalf("task after its request ended: %+v, %v", d, err)
		}
		return d.StatusMessage == "> Task :a:compileJava"
	})
	close(release)
	d := finish(t, store, created.TaskID)
	if d.Status != StatusCompleted || string(d.Result) != `{"content":[{"type":"text","text":"built"}]}` {
		t.Errorf("task after the build: %s %s", d.Status, d.Result)
	}
	if sawValue != "request value" || sawRun.ID() != created.TaskID {
		t.Errorf("the work's context lost the request's values (%v) or its run", sawValue)
	}
}

func TestToolCallTaskOutcomes(t *testing.T) {
	store := NewStore(Config{})
	defer closeStore(t, store)
	ext := &Extension{Store: store}
	next := func(ctx context.Context, method string, req sdkmcp.Request) (sdkmcp.Result, error) {
		p := req.GetParams().(*sdkmcp.CallToolParamsRaw)
		switch p.Name {
		case "rpc_error":
			return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: "projectDir must be a string"}
		case "tool_error":
			return &sdkmcp.CallToolResult{IsError: true, Content: []sdkmcp.Content{&sdkmcp.TextContent{Text: "build failed"}}}, nil
		case "cancellable":
			<-ctx.Done()
			return &sdkmcp.CallToolResult{IsError: true, StructuredContent: json.RawMessage(`{"outcome":"cancelled","detail":"build cancelled; BUILD failed acknowledged"}`),
				Content: []sdkmcp.Content{&sdkmcp.TextContent{Text: `{"outcome":"cancelled"}`}}}, nil
		}
		return nil, nil
	}
	h := ext.ToolCalls(func(*sdkmcp.CallToolParamsRaw) Support { return SupportOptional }, "")(next)
	start := func(name string) string {
		res, err := h(context.Background(), "tools/call", toolCall(name, true))
		if err != nil {
			t.Fatal(err)
		}
		return res.(*CreateTaskResult).TaskID
	}
	if d := finish(t, store, start("rpc_error")); d.Status != StatusFailed || d.ErrorCode() != jsonrpc.CodeInvalidParams {
		t.Errorf("JSON-RPC error: %+v", d)
	}
	if d := finish(t, store, start("tool_error")); d.Status != StatusCompleted || string(d.Result) != `{"content":[{"type":"text","text":"build failed"}],"isError":true}` {
		t.Errorf("tool error: %s %s", d.Status, d.Result)
	}
	if d := finish(t, store, start("nothing")); d.Status != StatusFailed || d.ErrorCode() != jsonrpc.CodeInternalError {
		t.Errorf("no result: %+v", d)
	}
	id := start("cancellable")
	if err := store.Cancel(id); err != nil {
		t.Fatal(err)
	}
	if d := finish(t, store, id); d.Status != StatusCancelled || d.StatusMessage != "build cancelled; BUILD failed acknowledged" {
		t.Errorf("cancelled: %+v", d)
	}
}

func TestToolCallsWhenTheStoreIsFull(t *testing.T) {
	store := NewStore(Config{MaxTasks: 1})
	defer closeStore(t, store)
	ext := &Extension{Store: store}
	next := func(ctx context.Context, method string, req sdkmcp.Request) (sdkmcp.Result, error) {
		<-ctx.Done()
		return &sdkmcp.CallToolResult{IsError: true}, nil
	}
	h := ext.ToolCalls(func(*sdkmcp.CallToolParamsRaw) Support { return SupportOptional }, "")(next)
	if _, err := h(context.Background(), "tools/call", toolCall("a", true)); err != nil {
		t.Fatal(err)
	}
	if _, err := h(context.Background(), "tools/call", toolCall("b", true)); code(err) != jsonrpc.CodeInternalError {
		t.Errorf("second task with the store full of running ones: %v, want -32603", err)
	}
}

func TestToolCallsAfterClose(t *testing.T) {
	store := NewStore(Config{})
	closeStore(t, store)
	ext := &Extension{Store: store}
	h := ext.ToolCalls(func(*sdkmcp.CallToolParamsRaw) Support { return SupportOptional }, "")(func(context.Context, string, sdkmcp.Request) (sdkmcp.Result, error) {
		return &sdkmcp.CallToolResult{}, nil
	})
	if _, err := h(context.Background(), "tools/call", toolCall("a", true)); code(err) != jsonrpc.CodeInternalError {
		t.Errorf("a task asked for after Close: %v, want -32603 (never a Go error, which would be code 0)", err)
	}
}
