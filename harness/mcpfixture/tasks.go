package main

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdkmcp "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/buildguard/buildguard/service/mcptask"
)

// The tools the suite's tasks-* scenarios call (SEP-2663 fixtures), and how
// each may run: greet never as a task, the others as a task when the request
// declares the extension; failing_job only as one (-32021 otherwise), and
// test_tool_with_task gathers its input synchronously (SEP-2322) first and
// becomes a required task on the round that brings the answer.
var taskSupport = map[string]mcptask.Support{
	"slow_compute":        mcptask.SupportOptional,
	"protocol_error_job":  mcptask.SupportOptional,
	"confirm_delete":      mcptask.SupportOptional,
	"multi_input":         mcptask.SupportOptional,
	"failing_job":         mcptask.SupportRequired,
	"test_tool_with_task": mcptask.SupportRequired,
}

// taskPolicy is the fixture's mcptask.Policy.
func taskPolicy(p *sdkmcp.CallToolParamsRaw) mcptask.Support {
	if p.Name == "test_tool_with_task" && len(p.InputResponses) == 0 {
		return mcptask.SupportNone
	}
	return taskSupport[p.Name]
}

func text(s string) *sdkmcp.CallToolResult {
	return &sdkmcp.CallToolResult{Content: []sdkmcp.Content{&sdkmcp.TextContent{Text: s}}}
}

// objectSchema is an input schema with these properties (name → JSON type).
func objectSchema(props map[string]string, required ...string) json.RawMessage {
	p := map[string]any{}
	for k, t := range props {
		p[k] = map[string]any{"type": t}
	}
	s := map[string]any{"type": "object", "properties": p}
	if len(required) > 0 {
		s["required"] = required
	}
	b, _ := json.Marshal(s)
	return b
}

// elicit is an elicitation/create input request for a confirmation or a
// name.
func elicit(message string, field string) json.RawMessage {
	b, _ := json.Marshal(map[string]any{
		"method": "elicitation/create",
		"params": map[string]any{
			"mode":    "form",
			"message": message,
			"requestedSchema": map[string]any{
				"type":       "object",
				"properties": map[string]any{field: map[string]any{"type": "boolean"}},
				"required":   []string{field},
			},
		},
	})
	return b
}

func registerTaskTools(s *sdkmcp.Server) {
	s.AddTool(&sdkmcp.Tool{Name: "greet", Description: "Returns Hello, {name}! (never a task)", InputSchema: objectSchema(map[string]string{"name": "string"}, "name")},
		func(ctx context.Context, req *sdkmcp.CallToolRequest) (*sdkmcp.CallToolResult, error) {
			var in struct{ Name string }
			_ = json.Unmarshal(req.Params.Arguments, &in)
			return text(fmt.Sprintf("Hello, %s!", in.Name)), nil
		})

	s.AddTool(&sdkmcp.Tool{Name: "slow_compute", Description: "Sleeps seconds, then answers; a task when the client declares the extension", InputSchema: objectSchema(map[string]string{"seconds": "number", "label": "string"})},
		func(ctx context.Context, req *sdkmcp.CallToolRequest) (*sdkmcp.CallToolResult, error) {
			var in struct {
				Seconds float64
				Label   string
			}
			_ = json.Unmarshal(req.Params.Arguments, &in)
			if r := mcptask.RunFrom(ctx); r != nil {
				r.Report(fmt.Sprintf("computing %s for %gs", in.Label, in.Seconds))
			}
			t := time.NewTimer(time.Duration(in.Seconds * float64(time.Second)))
			defer t.Stop()
			select {
			case <-t.C:
				return text(fmt.Sprintf("computed %s in %gs", in.Label, in.Seconds)), nil
			case <-ctx.Done():
				return &sdkmcp.CallToolResult{IsError: true, Content: []sdkmcp.Content{&sdkmcp.TextContent{Text: "slow_compute " + in.Label + " cancelled"}}}, nil
			}
		})

	s.AddTool(&sdkmcp.Tool{Name: "failing_job", Description: "Fails with a tool error after about a second; only as a task", InputSchema: objectSchema(nil)},
		func(ctx context.Context, req *sdkmcp.CallToolRequest) (*sdkmcp.CallToolResult, error) {
			select {
			case <-time.After(time.Second):
			case <-ctx.Done():
			}
			return &sdkmcp.CallToolResult{IsError: true, Content: []sdkmcp.Content{&sdkmcp.TextContent{Text: "failing_job failed, as it always does"}}}, nil
		})

	s.AddTool(&sdkmcp.Tool{Name: "protocol_error_job", Description: "Ends in a JSON-RPC error", InputSchema: objectSchema(nil)},
		func(ctx context.Context, req *sdkmcp.CallToolRequest) (*sdkmcp.CallToolResult, error) {
			return nil, &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: "Internal error: protocol_error_job always fails"}
		})

	s.AddTool(&sdkmcp.Tool{Name: "confirm_delete", Description: "Asks for a confirmation (input_required), then answers", InputSchema: objectSchema(map[string]string{"filename": "string"})},
		func(ctx context.Context, req *sdkmcp.CallToolRequest) (*sdkmcp.CallToolResult, error) {
			var in struct{ Filename string }
			_ = json.Unmarshal(req.Params.Arguments, &in)
			r := mcptask.RunFrom(ctx)
			if r == nil {
				return &sdkmcp.CallToolResult{IsError: true, Content: []sdkmcp.Content{&sdkmcp.TextContent{Text: "confirm_delete asks for input and runs only as a task"}}}, nil
			}
			answers, err := r.Input(map[string]json.RawMessage{"confirm-" + r.ID()[:8]: elicit("Delete "+in.Filename+"?", "confirm")})
			if err != nil {
				return &sdkmcp.CallToolResult{IsError: true, Content: []sdkmcp.Content{&sdkmcp.TextContent{Text: "confirm_delete cancelled"}}}, nil
			}
			return text(fmt.Sprintf("deleted %s: %s", in.Filename, answerSummary(answers))), nil
		})

	s.AddTool(&sdkmcp.Tool{Name: "multi_input", Description: "Asks two questions at once (input_required), then answers", InputSchema: objectSchema(nil)},
		func(ctx context.Context, req *sdkmcp.CallToolRequest) (*sdkmcp.CallToolResult, error) {
			r := mcptask.RunFrom(ctx)
			if r == nil {
				return &sdkmcp.CallToolResult{IsError: true, Content: []sdkmcp.Content{&sdkmcp.TextContent{Text: "multi_input runs only as a task"}}}, nil
			}
			answers, err := r.Input(map[string]json.RawMessage{
				"first-" + r.ID()[:8]:  elicit("First question?", "ok"),
				"second-" + r.ID()[:8]: elicit("Second question?", "ok"),
			})
			if err != nil {
				return &sdkmcp.CallToolResult{IsError: true, Content: []sdkmcp.Content{&sdkmcp.TextContent{Text: "multi_input cancelled"}}}, nil
			}
			return text("answered: " + answerSummary(answers)), nil
		})

	s.AddTool(&sdkmcp.Tool{Name: "test_tool_with_task", Description: "Asks for user_name (SEP-2322), then finishes as a task", InputSchema: objectSchema(nil)},
		func(ctx context.Context, req *sdkmcp.CallToolRequest) (*sdkmcp.CallToolResult, error) {
			if name := elicitedName(req.Params.InputResponses, "user_name"); name != "" {
				return text(fmt.Sprintf("Hello, %s!", name)), nil
			}
			return &sdkmcp.CallToolResult{InputRequests: sdkmcp.InputRequestMap{
				"user_name": &sdkmcp.ElicitParams{Message: "What is your name?", RequestedSchema: nameSchema()},
			}}, nil
		})
}

func answerSummary(answers map[string]json.RawMessage) string {
	keys := make([]string, 0, len(answers))
	for k := range answers {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	parts := make([]string, 0, len(keys))
	for _, k := range keys {
		parts = append(parts, k+"="+string(answers[k]))
	}
	return strings.Join(parts, ", ")
}

func nameSchema() map[string]any {
	return map[string]any{"type": "object", "properties": map[string]any{"name": map[string]any{"type": "string"}}, "required": []string{"name"}}
}

// elicitedName is content.name of an accepted elicitation answer under key.
func elicitedName(responses sdkmcp.InputResponseMap, key string) string {
	res, ok := responses[key].(*sdkmcp.ElicitResult)
	if !ok || res == nil || res.Action != "accept" {
		return ""
	}
	name, _ := res.Content["name"].(string)
	return name
}
