package model

import (
	"encoding/json"
	"fmt"
	"strings"
)

// anthropicRequest is the part of a Messages API request the server reads.
type anthropicRequest struct {
	Model    string `json:"model"`
	Stream   bool   `json:"stream"`
	Messages []struct {
		Role    string          `json:"role"`
		Content json.RawMessage `json:"content"`
	} `json:"messages"`
	Tools []json.RawMessage `json:"tools"`
}

// anthropicBlock is one content block of a message.
type anthropicBlock struct {
	Type      string          `json:"type"`
	ID        string          `json:"id"`
	Name      string          `json:"name"`
	ToolUseID string          `json:"tool_use_id"`
	Content   json.RawMessage `json:"content"`
	IsError   bool            `json:"is_error"`
	Text      string          `json:"text"`
}

// blocks is a message's content as blocks; a string content is one text block.
func anthropicBlocks(content json.RawMessage) []anthropicBlock {
	var s string
	if json.Unmarshal(content, &s) == nil {
		return []anthropicBlock{{Type: "text", Text: s}}
	}
	var bs []anthropicBlock
	_ = json.Unmarshal(content, &bs)
	return bs
}

// anthropicTurn counts the tool_result blocks of the conversation.
func (r *anthropicRequest) turn() int {
	n := 0
	for _, m := range r.Messages {
		for _, b := range anthropicBlocks(m.Content) {
			if b.Type == "tool_result" {
				n++
			}
		}
	}
	return n
}

// anthropic answers a Messages API request: count_tokens with a count, else
// the script's step as a message, streamed when the request asks for it.
func (s *Server) anthropic(body []byte, kind string) (answer, error) {
	var req anthropicRequest
	if err := json.Unmarshal(body, &req); err != nil {
		return answer{}, fmt.Errorf("reading a Messages request: %w", err)
	}
	turn := req.turn()
	if kind == "count" {
		b, _ := json.Marshal(map[string]int{"input_tokens": len(body)/4 + 1})
		return answer{contentType: "application/json", body: b, turn: turn, what: "count"}, nil
	}
	results, err := anthropicResults(body)
	if err != nil {
		return answer{}, err
	}
	call, text, isCall := s.step(results, len(req.Tools) > 0)
	id := s.nextID()
	msgID := fmt.Sprintf("msg_scripted_%d", id)
	usage := map[string]int{"input_tokens": len(body)/4 + 1, "output_tokens": 1}
	var block map[string]any
	stop, what := "end_turn", "text"
	if isCall {
		block = map[string]any{"type": "tool_use", "id": fmt.Sprintf("toolu_scripted_%d", id), "name": call.Name, "input": call.input()}
		stop, what = "tool_use", call.what()
	} else {
		block = map[string]any{"type": "text", "text": text}
	}
	if !req.Stream {
		msg := map[string]any{"id": msgID, "type": "message", "role": "assistant", "model": req.Model,
			"content": []any{block}, "stop_reason": stop, "stop_sequence": nil, "usage": usage}
		b, err := json.Marshal(msg)
		return answer{contentType: "application/json", body: b, turn: turn, what: what, resume: call.resume}, err
	}
	start, delta := map[string]any{"type": "text", "text": ""}, map[string]any{"type": "text_delta", "text": text}
	if isCall {
		start = map[string]any{"type": "tool_use", "id": block["id"], "name": call.Name, "input": map[string]any{}}
		delta = map[string]any{"type": "input_json_delta", "partial_json": string(call.input())}
	}
	events := []sse{
		{"message_start", map[string]any{"type": "message_start", "message": map[string]any{"id": msgID, "type": "message",
			"role": "assistant", "model": req.Model, "content": []any{}, "stop_reason": nil, "stop_sequence": nil, "usage": usage}}},
		{"content_block_start", map[string]any{"type": "content_block_start", "index": 0, "content_block": start}},
		{"content_block_delta", map[string]any{"type": "content_block_delta", "index": 0, "delta": delta}},
		{"content_block_stop", map[string]any{"type": "content_block_stop", "index": 0}},
		{"message_delta", map[string]any{"type": "message_delta", "delta": map[string]any{"stop_reason": stop, "stop_sequence": nil},
			"usage": map[string]int{"output_tokens": 1}}},
		{"message_stop", map[string]any{"type": "message_stop"}},
	}
	return answer{contentType: "text/event-stream", body: sseBody(events), turn: turn, what: what, resume: call.resume}, nil
}

// anthropicResults are the tool results of a Messages request.
func anthropicResults(body []byte) ([]ToolResult, error) {
	var req anthropicRequest
	if err := json.Unmarshal(body, &req); err != nil {
		return nil, fmt.Errorf("reading a Messages request: %w", err)
	}
	names := map[string]string{}
	var out []ToolResult
	for _, m := range req.Messages {
		for _, b := range anthropicBlocks(m.Content) {
			switch b.Type {
			case "tool_use":
				names[b.ID] = b.Name
			case "tool_result":
				out = append(out, ToolResult{CallID: b.ToolUseID, Name: names[b.ToolUseID], IsError: b.IsError,
					Raw: b.Content, Text: anthropicResultText(b.Content)})
			}
		}
	}
	return out, nil
}

// anthropicResultText is a tool_result's content as text: a string as is,
// text blocks one after another, any other block as its JSON.
func anthropicResultText(content json.RawMessage) string {
	var str string
	if json.Unmarshal(content, &str) == nil {
		return str
	}
	var raws []json.RawMessage
	if json.Unmarshal(content, &raws) != nil {
		return string(content)
	}
	var parts []string
	for _, raw := range raws {
		var b anthropicBlock
		if json.Unmarshal(raw, &b) == nil && b.Type == "text" {
			parts = append(parts, b.Text)
			continue
		}
		parts = append(parts, string(raw))
	}
	return strings.Join(parts, "\n")
}
