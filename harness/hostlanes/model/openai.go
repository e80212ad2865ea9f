package model

import (
	"encoding/json"
	"fmt"
	"strings"
)

// openAIRequest is the part of a Responses API request the server reads.
type openAIRequest struct {
	Model string            `json:"model"`
	Input json.RawMessage   `json:"input"`
	Tools []json.RawMessage `json:"tools"`
}

// openAIItem is one input item.
type openAIItem struct {
	Type      string          `json:"type"`
	CallID    string          `json:"call_id"`
	Name      string          `json:"name"`
	Namespace string          `json:"namespace"`
	Output    json.RawMessage `json:"output"`
}

// items is the input as items; a string input is none.
func (r *openAIRequest) items() []openAIItem {
	var items []openAIItem
	_ = json.Unmarshal(r.Input, &items)
	return items
}

// isOutput says whether an item hands back a tool call's result.
func (it openAIItem) isOutput() bool {
	return it.Type == "function_call_output" || it.Type == "custom_tool_call_output"
}

// openAI answers a Responses API request with the script's step, streamed.
func (s *Server) openAI(body []byte) (answer, error) {
	var req openAIRequest
	if err := json.Unmarshal(body, &req); err != nil {
		return answer{}, fmt.Errorf("reading a Responses request: %w", err)
	}
	results, err := openAIResults(body)
	if err != nil {
		return answer{}, err
	}
	turn := len(results)
	call, text, isCall := s.step(results, len(req.Tools) > 0)
	id := s.nextID()
	respID := fmt.Sprintf("resp_scripted_%d", id)
	var item map[string]any
	what := "text"
	if isCall {
		item = map[string]any{"type": "function_call", "id": fmt.Sprintf("fc_scripted_%d", id),
			"call_id": fmt.Sprintf("call_scripted_%d", id), "name": call.Name, "arguments": string(call.input()), "status": "completed"}
		if call.Namespace != "" {
			item["namespace"] = call.Namespace
		}
		what = call.what()
	} else {
		item = map[string]any{"type": "message", "id": fmt.Sprintf("msg_scripted_%d", id), "role": "assistant", "status": "completed",
			"content": []any{map[string]any{"type": "output_text", "text": text, "annotations": []any{}}}}
	}
	response := func(status string, output []any) map[string]any {
		r := map[string]any{"id": respID, "object": "response", "model": req.Model, "status": status, "output": output}
		if status == "completed" {
			r["usage"] = map[string]any{"input_tokens": len(body)/4 + 1, "input_tokens_details": map[string]int{"cached_tokens": 0},
				"output_tokens": 1, "output_tokens_details": map[string]int{"reasoning_tokens": 0}, "total_tokens": len(body)/4 + 2}
		}
		return r
	}
	added := map[string]any{}
	for k, v := range item {
		added[k] = v
	}
	added["status"] = "in_progress"
	events := []sse{
		{"response.created", map[string]any{"type": "response.created", "response": response("in_progress", []any{})}},
		{"response.output_item.added", map[string]any{"type": "response.output_item.added", "output_index": 0, "item": added}},
	}
	if !isCall {
		events = append(events, sse{"response.output_text.delta", map[string]any{"type": "response.output_text.delta",
			"item_id": item["id"], "output_index": 0, "content_index": 0, "delta": text}})
	}
	events = append(events,
		sse{"response.output_item.done", map[string]any{"type": "response.output_item.done", "output_index": 0, "item": item}},
		sse{"response.completed", map[string]any{"type": "response.completed", "response": response("completed", []any{item})}},
	)
	return answer{contentType: "text/event-stream", body: sseBody(events), turn: turn, what: what, resume: call.resume}, nil
}

// openAIResults are the tool results of a Responses request.
func openAIResults(body []byte) ([]ToolResult, error) {
	var req openAIRequest
	if err := json.Unmarshal(body, &req); err != nil {
		return nil, fmt.Errorf("reading a Responses request: %w", err)
	}
	names := map[string]string{}
	var out []ToolResult
	for _, it := range req.items() {
		switch {
		case it.Type == "function_call" || it.Type == "custom_tool_call":
			names[it.CallID] = it.Name
			if it.Namespace != "" {
				names[it.CallID] = it.Namespace + "/" + it.Name
			}
		case it.isOutput():
			out = append(out, ToolResult{CallID: it.CallID, Name: names[it.CallID], Raw: it.Output, Text: openAIOutputText(it.Output)})
		}
	}
	return out, nil
}

// openAIOutputText is an output as text: a string as is, content items'
// text one after another, anything else as its JSON.
func openAIOutputText(output json.RawMessage) string {
	var str string
	if json.Unmarshal(output, &str) == nil {
		return str
	}
	var raws []json.RawMessage
	if json.Unmarshal(output, &raws) != nil {
		return string(output)
	}
	var parts []string
	for _, raw := range raws {
		var c struct {
			Type string `json:"type"`
			Text string `json:"text"`
		}
		if json.Unmarshal(raw, &c) == nil && (c.Type == "input_text" || c.Type == "output_text") {
			parts = append(parts, c.Text)
			continue
		}
		parts = append(parts, string(raw))
	}
	return strings.Join(parts, "\n")
}
