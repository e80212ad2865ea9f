package mcptask

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdkmcp "github.com/modelcontextprotocol/go-sdk/mcp"
)

// Support says whether a tools/call may become a task.
type Support int

const (
	// SupportNone: the call always runs synchronously.
	SupportNone Support = iota
	// SupportOptional: a task when the request declares the extension,
	// else the synchronous result.
	SupportOptional
	// SupportRequired: a task when the request declares the extension,
	// else -32021.
	SupportRequired
)

// Policy decides a tools/call's Support from its params (the tool's name, and
// anything else the server wants to look at).
type Policy func(p *sdkmcp.CallToolParamsRaw) Support

// runKey carries a task's Run in the context of its work.
type runKey struct{}

// RunFrom is the Run of the task whose work ctx belongs to, nil outside a
// task. A tool reports its progress through it (Run.Report) and asks for
// input (Run.Input).
func RunFrom(ctx context.Context) *Run {
	r, _ := ctx.Value(runKey{}).(*Run)
	return r
}

// ToolCalls is receiving middleware that turns a tools/call into a task when
// policy allows it and the request declares the extension: the rest of the
// chain (next) runs as the task's work, on a context that keeps the
// request's values but not its cancellation (the call outlives its request;
// tasks/cancel and Close end it), and the request is answered at once with
// the CreateTaskResult. The task's result is exactly what next returned,
// marshalled; a JSON-RPC error fails it. The status message starts as
// message.
func (e *Extension) ToolCalls(policy Policy, message string) sdkmcp.Middleware {
	return func(next sdkmcp.MethodHandler) sdkmcp.MethodHandler {
		return func(ctx context.Context, method string, req sdkmcp.Request) (sdkmcp.Result, error) {
			if method != "tools/call" {
				return next(ctx, method, req)
			}
			p, _ := req.GetParams().(*sdkmcp.CallToolParamsRaw)
			if p == nil {
				return next(ctx, method, req)
			}
			support := policy(p)
			declared := RequestDeclared(req)
			if owner, ok := e.session2025(req, declared); ok {
				return e.toolCall2025(ctx, owner, support, message, next, method, req)
			}
			switch {
			case support == SupportNone || (support == SupportOptional && !declared):
				return next(ctx, method, req)
			case !declared:
				return nil, MissingCapability()
			}
			seed, err := e.Store.Start(message, toolWork(ctx, next, method, req))
			if err != nil {
				return nil, startError(err)
			}
			return NewCreateTaskResult(seed), nil
		}
	}
}

// toolWork is the work of a tools/call that became a task: the rest of the
// chain (next), on a context that keeps the request's values but not its
// cancellation.
func toolWork(ctx context.Context, next sdkmcp.MethodHandler, method string, req sdkmcp.Request) Work {
	detached := context.WithoutCancel(ctx)
	return func(taskCtx context.Context, r *Run) (json.RawMessage, error) {
		wctx, cancel := context.WithCancel(context.WithValue(detached, runKey{}, r))
		defer cancel()
		stop := context.AfterFunc(taskCtx, cancel)
		defer stop()
		res, err := next(wctx, method, req)
		if err != nil {
			return nil, err
		}
		if res == nil {
			return nil, errors.New("the tool returned no result")
		}
		b, err := json.Marshal(res)
		if err != nil {
			return nil, fmt.Errorf("encoding the tool result: %w", err)
		}
		if taskCtx.Err() != nil {
			// Cancelled: a tool error now is the tool honouring it.
			if msg, isErr := toolError(b); isErr {
				return nil, CancelledWith(msg, b)
			}
		}
		return b, nil
	}
}

// startError is the JSON-RPC error of a task that could not start.
func startError(err error) error {
	switch {
	case errors.Is(err, ErrFull):
		return &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: "Internal error: " + err.Error() + "; cancel one or wait for it"}
	case errors.Is(err, ErrClosed):
		return &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: "Internal error: the server is stopping; it starts no more tasks"}
	default:
		// A Go error would reach the client with code 0.
		return &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: "Internal error: " + err.Error()}
	}
}

// session2025 is the owner of req's tasks when it is a request of a
// 2025-11-25 session that did not declare the extension.
func (e *Extension) session2025(req sdkmcp.Request, declared bool) (any, bool) {
	if declared || e.Session == nil {
		return nil, false
	}
	return e.Session(req)
}

// toolCall2025 is ToolCalls in a 2025-11-25 session (SEP-1686): a call
// with a task param becomes owner's task when policy allows it, and is
// -32601 when it does not; a call without one runs synchronously, or is
// -32601 when policy requires a task.
func (e *Extension) toolCall2025(ctx context.Context, owner any, support Support, message string, next sdkmcp.MethodHandler, method string, req sdkmcp.Request) (sdkmcp.Result, error) {
	p, _ := req.GetParams().(*sdkmcp.CallToolParamsRaw)
	asked, err := taskParam(p)
	switch {
	case err != nil:
		return nil, err
	case !asked && support == SupportRequired:
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeMethodNotFound, Message: fmt.Sprintf(msgTaskRequired, p.Name)}
	case !asked:
		return next(ctx, method, req)
	case support == SupportNone:
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeMethodNotFound, Message: fmt.Sprintf(msgNotTaskTool, p.Name)}
	}
	task, err := e.Store.Start2025(message, owner, toolWork(ctx, next, method, req))
	if err != nil {
		return nil, startError(err)
	}
	return &CreateTaskResult2025{Task: task}, nil
}

// maxCancelMessage bounds the statusMessage of a cancelled task.
const maxCancelMessage = 400

// toolError reports whether a tools/call result is a tool error, and its
// message: structuredContent.detail when there is one, else the first text
// block, cut to maxCancelMessage bytes.
func toolError(result json.RawMessage) (string, bool) {
	var r struct {
		IsError           bool `json:"isError"`
		StructuredContent struct {
			Detail string `json:"detail"`
		} `json:"structuredContent"`
		Content []struct {
			Type string `json:"type"`
			Text string `json:"text"`
		} `json:"content"`
	}
	if json.Unmarshal(result, &r) != nil || !r.IsError {
		return "", false
	}
	msg := r.StructuredContent.Detail
	for _, c := range r.Content {
		if msg == "" && c.Type == "text" {
			msg = c.Text
		}
	}
	if msg == "" {
		msg = "cancelled"
	}
	if len(msg) > maxCancelMessage {
		msg = strings.ToValidUTF8(msg[:maxCancelMessage], "") + "…"
	}
	return msg, true
}
