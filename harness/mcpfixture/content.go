//lint:file-ignore SA1019 the conformance suite still checks logging, sampling and roots, which 2026-07-28 deprecates but keeps serving; the fixture must exercise them

package main

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdkmcp "github.com/modelcontextprotocol/go-sdk/mcp"
)

// The fixture tools, resources and prompts the suite's scenarios call by
// name, with the answers they check (the suite's own reference fixtures;
// go-sdk's conformance/everything-server serves the same ones).

// A 1x1 PNG and a silent WAV, as the suite's fixtures send them.
const (
	pngBase64 = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg=="
	wavBase64 = "UklGRiYAAABXQVZFZm10IBAAAAABAAEAQB8AAAB9AAACABAAZGF0YQIAAAA="
)

func decode64(s string) []byte {
	b, err := base64.StdEncoding.DecodeString(s)
	if err != nil {
		panic(err) // a constant above
	}
	return b
}

var emptyObject = json.RawMessage(`{"type":"object"}`)

func addTool(s *sdkmcp.Server, name, description string, schema json.RawMessage, h sdkmcp.ToolHandler) {
	if schema == nil {
		schema = emptyObject
	}
	s.AddTool(&sdkmcp.Tool{Name: name, Description: description, InputSchema: schema}, h)
}

func result(c ...sdkmcp.Content) *sdkmcp.CallToolResult { return &sdkmcp.CallToolResult{Content: c} }

func args[T any](req *sdkmcp.CallToolRequest) T {
	var v T
	_ = json.Unmarshal(req.Params.Arguments, &v)
	return v
}

func registerContentTools(s *sdkmcp.Server) {
	img := func() *sdkmcp.ImageContent {
		return &sdkmcp.ImageContent{Data: decode64(pngBase64), MIMEType: "image/png"}
	}
	embedded := func(uri string) *sdkmcp.EmbeddedResource {
		return &sdkmcp.EmbeddedResource{Resource: &sdkmcp.ResourceContents{URI: uri, MIMEType: "text/plain", Text: "This is an embedded resource"}}
	}
	addTool(s, "test_simple_text", "Returns simple text", nil, func(context.Context, *sdkmcp.CallToolRequest) (*sdkmcp.CallToolResult, error) {
		return result(&sdkmcp.TextContent{Text: "This is a simple text response for testing."}), nil
	})
	addTool(s, "test_image_content", "Returns an image", nil, func(context.Context, *sdkmcp.CallToolRequest) (*sdkmcp.CallToolResult, error) {
		return result(img()), nil
	})
	addTool(s, "test_audio_content", "Returns audio", nil, func(context.Context, *sdkmcp.CallToolRequest) (*sdkmcp.CallToolResult, error) {
		return result(&sdkmcp.AudioContent{Data: decode64(wavBase64), MIMEType: "audio/wav"}), nil
	})
	addTool(s, "test_embedded_resource", "Returns an embedded resource", nil, func(context.Context, *sdkmcp.CallToolRequest) (*sdkmcp.CallToolResult, error) {
		return result(embedded("test://embedded-resource")), nil
	})
	addTool(s, "test_multiple_content_types", "Returns text, an image and a resource", nil, func(context.Context, *sdkmcp.CallToolRequest) (*sdkmcp.CallToolResult, error) {
		return result(&sdkmcp.TextContent{Text: "This is text content"}, img(), embedded("test://embedded-in-multiple")), nil
	})
	addTool(s, "test_tool_with_logging", "Logs three messages", nil, func(ctx context.Context, req *sdkmcp.CallToolRequest) (*sdkmcp.CallToolResult, error) {
		for i, m := range []string{"Tool execution started", "Tool processing data", "Tool execution completed"} {
			if i > 0 {
				pause(ctx, 50*time.Millisecond)
			}
			_ = req.Session.Log(ctx, &sdkmcp.LoggingMessageParams{Level: "info", Data: m})
		}
		return result(&sdkmcp.TextContent{Text: "Tool with logging executed successfully"}), nil
	})
	addTool(s, "test_tool_with_progress", "Reports progress 0, 50, 100", nil, func(ctx context.Context, req *sdkmcp.CallToolRequest) (*sdkmcp.CallToolResult, error) {
		tok := req.Params.GetProgressToken()
		for _, p := range []float64{0, 50, 100} {
			_ = req.Session.NotifyProgress(ctx, &sdkmcp.ProgressNotificationParams{ProgressToken: tok, Progress: p, Total: 100, Message: fmt.Sprintf("Completed step %.0f of 100", p)})
			pause(ctx, 50*time.Millisecond)
		}
		return result(&sdkmcp.TextContent{Text: fmt.Sprint(tok)}), nil
	})
	addTool(s, "test_error_handling", "Always a tool error", nil, func(context.Context, *sdkmcp.CallToolRequest) (*sdkmcp.CallToolResult, error) {
		return &sdkmcp.CallToolResult{IsError: true, Content: []sdkmcp.Content{&sdkmcp.TextContent{Text: "This tool intentionally returns an error for testing"}}}, nil
	})
	addTool(s, "test_sampling", "Asks the client's LLM", objectSchema(map[string]string{"prompt": "string"}, "prompt"), func(ctx context.Context, req *sdkmcp.CallToolRequest) (*sdkmcp.CallToolResult, error) {
		in := args[struct{ Prompt string }](req)
		res, err := req.Session.CreateMessage(ctx, &sdkmcp.CreateMessageParams{Messages: []*sdkmcp.SamplingMessage{{Role: "user", Content: &sdkmcp.TextContent{Text: in.Prompt}}}, MaxTokens: 100})
		if err != nil {
			return nil, fmt.Errorf("sampling failed: %w", err)
		}
		text := "(non-text response)"
		if tc, ok := res.Content.(*sdkmcp.TextContent); ok {
			text = tc.Text
		}
		return result(&sdkmcp.TextContent{Text: "LLM response: " + text}), nil
	})
	elicitTool := func(name, message string, schema any) {
		addTool(s, name, "Asks the user", objectSchema(map[string]string{"message": "string"}), func(ctx context.Context, req *sdkmcp.CallToolRequest) (*sdkmcp.CallToolResult, error) {
			msg := message
			if m := args[struct{ Message string }](req).Message; m != "" {
				msg = m
			}
			res, err := req.Session.Elicit(ctx, &sdkmcp.ElicitParams{Message: msg, RequestedSchema: schema})
			if err != nil {
				return nil, fmt.Errorf("elicitation failed: %w", err)
			}
			return result(&sdkmcp.TextContent{Text: fmt.Sprintf("Elicitation result: action=%s, content=%v", res.Action, res.Content)}), nil
		})
	}
	elicitTool("test_elicitation", "Please provide your username", map[string]any{"type": "object",
		"properties": map[string]any{"username": map[string]any{"type": "string", "description": "Your preferred username"}}, "required": []string{"username"}})
	elicitTool("test_elicitation_sep1034_defaults", "Test defaults for primitives", map[string]any{"type": "object", "properties": map[string]any{
		"name":     map[string]any{"type": "string", "description": "User name", "default": "John Doe"},
		"age":      map[string]any{"type": "integer", "description": "User age", "default": 30},
		"score":    map[string]any{"type": "number", "description": "User score", "default": 95.5},
		"status":   map[string]any{"type": "string", "description": "User status", "enum": []string{"active", "inactive", "pending"}, "default": "active"},
		"verified": map[string]any{"type": "boolean", "description": "Verification status", "default": true},
	}})
	titled := []map[string]any{{"const": "value1", "title": "First Option"}, {"const": "value2", "title": "Second Option"}, {"const": "value3", "title": "Third Option"}}
	elicitTool("test_elicitation_sep1330_enums", "Test enum schemas", map[string]any{"type": "object", "properties": map[string]any{
		"untitledSingle": map[string]any{"type": "string", "enum": []string{"option1", "option2", "option3"}},
		"titledSingle":   map[string]any{"type": "string", "oneOf": titled},
		"legacyEnum":     map[string]any{"type": "string", "enum": []string{"opt1", "opt2", "opt3"}, "enumNames": []string{"Option One", "Option Two", "Option Three"}},
		"untitledMulti":  map[string]any{"type": "array", "minItems": 1, "maxItems": 3, "items": map[string]any{"type": "string", "enum": []string{"option1", "option2", "option3"}}},
		"titledMulti":    map[string]any{"type": "array", "minItems": 1, "maxItems": 3, "items": map[string]any{"anyOf": titled}},
	}})
	addTool(s, "json_schema_2020_12_tool", "Tool with JSON Schema 2020-12 features", json.RawMessage(`{
		"$schema": "https://json-schema.org/draft/2020-12/schema",
		"type": "object",
		"$defs": {"address": {"$anchor": "addressDef", "type": "object", "properties": {"street": {"type": "string"}, "city": {"type": "string"}}}},
		"properties": {
			"name": {"type": "string"},
			"address": {"$ref": "#/$defs/address"},
			"contactMethod": {"type": "string", "enum": ["phone", "email"]},
			"phone": {"type": "string"},
			"email": {"type": "string"}
		},
		"allOf": [{"anyOf": [{"required": ["phone"]}, {"required": ["email"]}]}],
		"if": {"properties": {"contactMethod": {"const": "phone"}}, "required": ["contactMethod"]},
		"then": {"required": ["phone"]},
		"else": {"required": ["email"]},
		"additionalProperties": false
	}`), func(ctx context.Context, req *sdkmcp.CallToolRequest) (*sdkmcp.CallToolResult, error) {
		return result(&sdkmcp.TextContent{Text: fmt.Sprintf("JSON Schema 2020-12 tool called with: %s", req.Params.Arguments)}), nil
	})
	addTool(s, "test_reconnection", "Closes its event stream and answers after the client reconnects", nil, func(ctx context.Context, req *sdkmcp.CallToolRequest) (*sdkmcp.CallToolResult, error) {
		if req.Extra != nil && req.Extra.CloseSSEStream != nil {
			req.Extra.CloseSSEStream(sdkmcp.CloseSSEStreamArgs{RetryAfter: 10 * time.Millisecond})
		}
		pause(ctx, 100*time.Millisecond)
		return result(&sdkmcp.TextContent{Text: "Reconnection test completed successfully. If you received this, the client properly reconnected after stream closure."}), nil
	})
	addTool(s, "test_x_mcp_header", "SEP-2243 Mcp-Param-* validation", json.RawMessage(`{"type":"object","properties":{
		"region":{"type":"string","description":"mirrored into Mcp-Param-Region","x-mcp-header":"Region"},
		"level":{"type":"integer","description":"not mirrored"}}}`), func(ctx context.Context, req *sdkmcp.CallToolRequest) (*sdkmcp.CallToolResult, error) {
		return result(&sdkmcp.TextContent{Text: "region=" + args[struct{ Region string }](req).Region}), nil
	})
	addTool(s, "test_missing_capability", "Needs the client's sampling capability (-32021 otherwise)", nil, func(ctx context.Context, req *sdkmcp.CallToolRequest) (*sdkmcp.CallToolResult, error) {
		if c := req.ClientCapabilities(); c != nil && c.Sampling != nil {
			return result(&sdkmcp.TextContent{Text: "Client declared the sampling capability; tool executed."}), nil
		}
		data, _ := json.Marshal(sdkmcp.MissingRequiredClientCapabilityData{RequiredCapabilities: &sdkmcp.ClientCapabilities{Sampling: &sdkmcp.SamplingCapabilities{}}})
		return nil, &jsonrpc.Error{Code: sdkmcp.CodeMissingRequiredClientCapabilities, Message: "sampling capability required but not declared by client", Data: data}
	})
	addTool(s, "test_streaming_elicitation", "Answers with a result only", nil, func(context.Context, *sdkmcp.CallToolRequest) (*sdkmcp.CallToolResult, error) {
		return result(&sdkmcp.TextContent{Text: "stream observed: result frames only, no top-level requests"}), nil
	})
	addTool(s, "test_logging_tool", "Tries to log", nil, func(ctx context.Context, req *sdkmcp.CallToolRequest) (*sdkmcp.CallToolResult, error) {
		_ = req.Session.Log(ctx, &sdkmcp.LoggingMessageParams{Level: "info", Data: "test_logging_tool executed"})
		return result(&sdkmcp.TextContent{Text: "Log attempted; framework gates on _meta.../logLevel."}), nil
	})
	addTool(s, "test_trigger_tool_change", "Changes the tool list", nil, func(context.Context, *sdkmcp.CallToolRequest) (*sdkmcp.CallToolResult, error) {
		addTool(s, "__transient_tool_for_list_changed", "Transient tool", nil, func(context.Context, *sdkmcp.CallToolRequest) (*sdkmcp.CallToolResult, error) {
			return result(), nil
		})
		return result(&sdkmcp.TextContent{Text: "tools_list_changed published"}), nil
	})
	addTool(s, "test_trigger_prompt_change", "Changes the prompt list", nil, func(context.Context, *sdkmcp.CallToolRequest) (*sdkmcp.CallToolResult, error) {
		s.AddPrompt(&sdkmcp.Prompt{Name: "__transient_prompt_for_list_changed", Description: "Transient prompt"}, func(context.Context, *sdkmcp.GetPromptRequest) (*sdkmcp.GetPromptResult, error) {
			return &sdkmcp.GetPromptResult{}, nil
		})
		return result(&sdkmcp.TextContent{Text: "prompts_list_changed published"}), nil
	})
	registerInputRequiredTools(s)
}

// pause waits d or until ctx ends.
func pause(ctx context.Context, d time.Duration) {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
	case <-ctx.Done():
	}
}

// accepted is the content of an accepted elicitation answer under key.
func accepted(responses sdkmcp.InputResponseMap, key string) map[string]any {
	res, ok := responses[key].(*sdkmcp.ElicitResult)
	if !ok || res == nil || res.Action != "accept" {
		return nil
	}
	return res.Content
}

func sampled(responses sdkmcp.InputResponseMap, key string) (string, bool) {
	res, ok := responses[key].(*sdkmcp.CreateMessageWithToolsResult)
	if !ok || res == nil {
		return "", false
	}
	for _, c := range res.Content {
		if tc, ok := c.(*sdkmcp.TextContent); ok {
			return tc.Text, true
		}
	}
	return "(non-text response)", true
}

func schemaOf(field, typ string) map[string]any {
	return map[string]any{"type": "object", "properties": map[string]any{field: map[string]any{"type": typ}}, "required": []string{field}}
}

// tampered is the suffix the tampered-state scenario appends to a state.
const tampered = "-TAMPERED"

var errInvalidState = &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: "invalid requestState"}

// registerInputRequiredTools are the SEP-2322 (multi round-trip) fixtures.
func registerInputRequiredTools(s *sdkmcp.Server) {
	askName := func() *sdkmcp.ElicitParams {
		return &sdkmcp.ElicitParams{Message: "What is your name?", RequestedSchema: schemaOf("name", "string")}
	}
	sample := func(prompt string, max int64) *sdkmcp.CreateMessageParams {
		return &sdkmcp.CreateMessageParams{Messages: []*sdkmcp.SamplingMessage{{Role: "user", Content: &sdkmcp.TextContent{Text: prompt}}}, MaxTokens: max}
	}
	confirm := func() *sdkmcp.ElicitParams {
		return &sdkmcp.ElicitParams{Message: "Please confirm", RequestedSchema: schemaOf("ok", "boolean")}
	}
	addTool(s, "test_input_required_result_elicitation", "Asks for the caller's name in band", nil, func(ctx context.Context, req *sdkmcp.CallToolRequest) (*sdkmcp.CallToolResult, error) {
		if name, _ := accepted(req.Params.InputResponses, "user_name")["name"].(string); name != "" {
			return result(&sdkmcp.TextContent{Text: "Hello, " + name + "!"}), nil
		}
		return &sdkmcp.CallToolResult{InputRequests: sdkmcp.InputRequestMap{"user_name": askName()}}, nil
	})
	addTool(s, "test_input_required_result_sampling", "Asks the client's LLM in band", nil, func(ctx context.Context, req *sdkmcp.CallToolRequest) (*sdkmcp.CallToolResult, error) {
		if text, ok := sampled(req.Params.InputResponses, "capital_question"); ok {
			return result(&sdkmcp.TextContent{Text: "Sampling response: " + text}), nil
		}
		return &sdkmcp.CallToolResult{InputRequests: sdkmcp.InputRequestMap{"capital_question": sample("What is the capital of France?", 100)}}, nil
	})
	addTool(s, "test_input_required_result_list_roots", "Asks for the client's roots in band", nil, func(ctx context.Context, req *sdkmcp.CallToolRequest) (*sdkmcp.CallToolResult, error) {
		if res, ok := req.Params.InputResponses["client_roots"].(*sdkmcp.ListRootsResult); ok && res != nil {
			var uris []string
			for _, r := range res.Roots {
				uris = append(uris, r.URI)
			}
			return result(&sdkmcp.TextContent{Text: fmt.Sprintf("Client exposed %d root(s): %s", len(res.Roots), strings.Join(uris, ", "))}), nil
		}
		return &sdkmcp.CallToolResult{InputRequests: sdkmcp.InputRequestMap{"client_roots": &sdkmcp.ListRootsParams{}}}, nil
	})
	addTool(s, "test_input_required_result_request_state", "Round-trips requestState", nil, func(ctx context.Context, req *sdkmcp.CallToolRequest) (*sdkmcp.CallToolResult, error) {
		if accepted(req.Params.InputResponses, "confirm") != nil {
			if st := req.Params.RequestState; st == "" || strings.HasSuffix(st, tampered) {
				return nil, errInvalidState
			}
			return result(&sdkmcp.TextContent{Text: "state-ok: requestState received and confirmation accepted"}), nil
		}
		return &sdkmcp.CallToolResult{InputRequests: sdkmcp.InputRequestMap{"confirm": confirm()}, RequestState: "request_state"}, nil
	})
	addTool(s, "test_input_required_result_multiple_inputs", "Asks for a name, a sample and the roots at once", nil, func(ctx context.Context, req *sdkmcp.CallToolRequest) (*sdkmcp.CallToolResult, error) {
		name, _ := accepted(req.Params.InputResponses, "user_name")["name"].(string)
		greeting, hasGreeting := sampled(req.Params.InputResponses, "greeting")
		roots, hasRoots := req.Params.InputResponses["client_roots"].(*sdkmcp.ListRootsResult)
		if name != "" && hasGreeting && hasRoots && roots != nil {
			return result(&sdkmcp.TextContent{Text: fmt.Sprintf("%s %s — %d root(s) visible", greeting, name, len(roots.Roots))}), nil
		}
		return &sdkmcp.CallToolResult{InputRequests: sdkmcp.InputRequestMap{
			"user_name": askName(), "greeting": sample("Generate a greeting", 50), "client_roots": &sdkmcp.ListRootsParams{},
		}, RequestState: "multiple_inputs"}, nil
	})
	addTool(s, "test_input_required_result_multi_round", "Two rounds of questions", nil, func(ctx context.Context, req *sdkmcp.CallToolRequest) (*sdkmcp.CallToolResult, error) {
		st := req.Params.RequestState
		switch {
		case st == "":
			return &sdkmcp.CallToolResult{InputRequests: sdkmcp.InputRequestMap{"step1": &sdkmcp.ElicitParams{Message: "Step 1: What is your name?", RequestedSchema: schemaOf("name", "string")}}, RequestState: "round=1"}, nil
		case st == "round=1":
			name, _ := accepted(req.Params.InputResponses, "step1")["name"].(string)
			if name == "" {
				name = "unknown"
			}
			return &sdkmcp.CallToolResult{InputRequests: sdkmcp.InputRequestMap{"step2": &sdkmcp.ElicitParams{Message: "Step 2: What is your favorite color?", RequestedSchema: schemaOf("color", "string")}}, RequestState: "round=2;name=" + name}, nil
		default:
			color, _ := accepted(req.Params.InputResponses, "step2")["color"].(string)
			if color == "" {
				color = "unknown"
			}
			return result(&sdkmcp.TextContent{Text: fmt.Sprintf("Multi-round complete: %s likes %s", strings.TrimPrefix(st, "round=2;name="), color)}), nil
		}
	})
	addTool(s, "test_input_required_result_tampered_state", "Refuses a tampered requestState", nil, func(ctx context.Context, req *sdkmcp.CallToolRequest) (*sdkmcp.CallToolResult, error) {
		if st := req.Params.RequestState; st != "" {
			if strings.HasSuffix(st, tampered) {
				return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: "invalid requestState: tampered"}
			}
			if accepted(req.Params.InputResponses, "confirm") != nil {
				return result(&sdkmcp.TextContent{Text: "state-ok: requestState received and confirmation accepted"}), nil
			}
		}
		return &sdkmcp.CallToolResult{InputRequests: sdkmcp.InputRequestMap{"confirm": confirm()}, RequestState: "tampered_state"}, nil
	})
	addTool(s, "test_input_required_result_capabilities", "Asks only for what the client declared", nil, func(ctx context.Context, req *sdkmcp.CallToolRequest) (*sdkmcp.CallToolResult, error) {
		if len(req.Params.InputResponses) > 0 {
			return result(&sdkmcp.TextContent{Text: "Capability-aware input requests fulfilled"}), nil
		}
		c := req.ClientCapabilities()
		reqs := sdkmcp.InputRequestMap{}
		if c != nil && c.Elicitation != nil {
			reqs["user_name"] = askName()
		}
		if c != nil && c.Sampling != nil {
			reqs["greeting"] = sample("Generate a short greeting", 50)
		}
		if c != nil && (c.RootsV2 != nil || c.Roots.ListChanged) {
			reqs["client_roots"] = &sdkmcp.ListRootsParams{}
		}
		if len(reqs) == 0 {
			return result(&sdkmcp.TextContent{Text: "No declared client capability supports an in-band input request"}), nil
		}
		return &sdkmcp.CallToolResult{InputRequests: reqs}, nil
	})
}

const watchedURI = "test://watched-resource"

var templateURI = regexp.MustCompile(`^test://template/([^/]+)/data$`)

func registerResources(s *sdkmcp.Server) {
	text := func(uri, mime, body string) *sdkmcp.ReadResourceResult {
		return &sdkmcp.ReadResourceResult{Contents: []*sdkmcp.ResourceContents{{URI: uri, MIMEType: mime, Text: body}}}
	}
	s.AddResource(&sdkmcp.Resource{Name: "static-text", Description: "A static text resource", MIMEType: "text/plain", URI: "test://static-text"},
		func(ctx context.Context, req *sdkmcp.ReadResourceRequest) (*sdkmcp.ReadResourceResult, error) {
			return text(req.Params.URI, "text/plain", "This is the content of the static text resource."), nil
		})
	s.AddResource(&sdkmcp.Resource{Name: "static-binary", Description: "A static binary resource", MIMEType: "image/png", URI: "test://static-binary"},
		func(ctx context.Context, req *sdkmcp.ReadResourceRequest) (*sdkmcp.ReadResourceResult, error) {
			return &sdkmcp.ReadResourceResult{Contents: []*sdkmcp.ResourceContents{{URI: req.Params.URI, MIMEType: "image/png", Blob: decode64(pngBase64)}}}, nil
		})
	s.AddResourceTemplate(&sdkmcp.ResourceTemplate{Name: "template", Description: "A resource template", MIMEType: "application/json", URITemplate: "test://template/{id}/data"},
		func(ctx context.Context, req *sdkmcp.ReadResourceRequest) (*sdkmcp.ReadResourceResult, error) {
			m := templateURI.FindStringSubmatch(req.Params.URI)
			if m == nil {
				return nil, sdkmcp.ResourceNotFoundError(req.Params.URI)
			}
			return text(req.Params.URI, "application/json", fmt.Sprintf(`{"id": "%s", "templateTest": true, "data": "Data for ID: %s"}`, m[1], m[1])), nil
		})
	s.AddResource(&sdkmcp.Resource{Name: "watched-resource", Description: "A resource that changes every 3 seconds", MIMEType: "text/plain", URI: watchedURI},
		func(ctx context.Context, req *sdkmcp.ReadResourceRequest) (*sdkmcp.ReadResourceResult, error) {
			return text(req.Params.URI, "text/plain", "Watched resource content"), nil
		})
}

func registerPrompts(s *sdkmcp.Server) {
	msg := func(c sdkmcp.Content) *sdkmcp.PromptMessage { return &sdkmcp.PromptMessage{Role: "user", Content: c} }
	s.AddPrompt(&sdkmcp.Prompt{Name: "test_simple_prompt", Title: "Simple Test Prompt", Description: "A simple prompt without arguments"},
		func(context.Context, *sdkmcp.GetPromptRequest) (*sdkmcp.GetPromptResult, error) {
			return &sdkmcp.GetPromptResult{Description: "A simple test prompt", Messages: []*sdkmcp.PromptMessage{msg(&sdkmcp.TextContent{Text: "This is a simple prompt for testing."})}}, nil
		})
	s.AddPrompt(&sdkmcp.Prompt{Name: "test_prompt_with_arguments", Title: "Prompt With Arguments", Description: "A prompt with required arguments",
		Arguments: []*sdkmcp.PromptArgument{{Name: "arg1", Description: "First test argument", Required: true}, {Name: "arg2", Description: "Second test argument", Required: true}}},
		func(ctx context.Context, req *sdkmcp.GetPromptRequest) (*sdkmcp.GetPromptResult, error) {
			a := req.Params.Arguments
			return &sdkmcp.GetPromptResult{Description: "A prompt with arguments", Messages: []*sdkmcp.PromptMessage{
				msg(&sdkmcp.TextContent{Text: fmt.Sprintf("Prompt with arguments: arg1='%s', arg2='%s'", a["arg1"], a["arg2"])})}}, nil
		})
	s.AddPrompt(&sdkmcp.Prompt{Name: "test_prompt_with_embedded_resource", Title: "Prompt With Embedded Resource", Description: "A prompt that embeds a resource",
		Arguments: []*sdkmcp.PromptArgument{{Name: "resourceUri", Description: "URI of the resource to embed", Required: true}}},
		func(ctx context.Context, req *sdkmcp.GetPromptRequest) (*sdkmcp.GetPromptResult, error) {
			return &sdkmcp.GetPromptResult{Description: "A prompt with an embedded resource", Messages: []*sdkmcp.PromptMessage{
				msg(&sdkmcp.EmbeddedResource{Resource: &sdkmcp.ResourceContents{URI: req.Params.Arguments["resourceUri"], MIMEType: "text/plain", Text: "Embedded resource content for testing."}}),
				msg(&sdkmcp.TextContent{Text: "Please process the embedded resource above."})}}, nil
		})
	s.AddPrompt(&sdkmcp.Prompt{Name: "test_prompt_with_image", Title: "Prompt With Image", Description: "A prompt with an image"},
		func(context.Context, *sdkmcp.GetPromptRequest) (*sdkmcp.GetPromptResult, error) {
			return &sdkmcp.GetPromptResult{Description: "A prompt with an image", Messages: []*sdkmcp.PromptMessage{
				msg(&sdkmcp.ImageContent{Data: decode64(pngBase64), MIMEType: "image/png"}),
				msg(&sdkmcp.TextContent{Text: "Please analyze the image above."})}}, nil
		})
	s.AddPrompt(&sdkmcp.Prompt{Name: "test_input_required_result_prompt", Description: "Asks for context in band (SEP-2322)"},
		func(ctx context.Context, req *sdkmcp.GetPromptRequest) (*sdkmcp.GetPromptResult, error) {
			if c := accepted(req.Params.InputResponses, "user_context"); c != nil {
				ctxText, _ := c["context"].(string)
				return &sdkmcp.GetPromptResult{Description: "A prompt with elicited context", Messages: []*sdkmcp.PromptMessage{msg(&sdkmcp.TextContent{Text: "Context: " + ctxText})}}, nil
			}
			return &sdkmcp.GetPromptResult{InputRequests: sdkmcp.InputRequestMap{
				"user_context": &sdkmcp.ElicitParams{Message: "Please provide context for the prompt", RequestedSchema: schemaOf("context", "string")}}}, nil
		})
}

// watchResource reports a change of the watched resource every 3 seconds
// until ctx ends.
func watchResource(ctx context.Context, s *sdkmcp.Server) {
	t := time.NewTicker(3 * time.Second)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			_ = s.ResourceUpdated(ctx, &sdkmcp.ResourceUpdatedNotificationParams{URI: watchedURI})
		}
	}
}
