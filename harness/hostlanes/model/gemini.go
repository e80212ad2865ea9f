package model

import (
	"encoding/json"
	"fmt"
	"strings"
)

// geminiRequest is the part of a generateContent request the server reads.
type geminiRequest struct {
	Contents []struct {
		Role  string       `json:"role"`
		Parts []geminiPart `json:"parts"`
	} `json:"contents"`
	Tools []struct {
		FunctionDeclarations []json.RawMessage `json:"functionDeclarations"`
	} `json:"tools"`
	GenerationConfig struct {
		ResponseSchema     map[string]any `json:"responseSchema"`
		ResponseJSONSchema map[string]any `json:"responseJsonSchema"`
	} `json:"generationConfig"`
}

// geminiPart is one part of a content.
type geminiPart struct {
	Text             string `json:"text"`
	FunctionResponse *struct {
		ID       string          `json:"id"`
		Name     string          `json:"name"`
		Response json.RawMessage `json:"response"`
	} `json:"functionResponse"`
	FunctionCall *struct {
		ID   string `json:"id"`
		Name string `json:"name"`
	} `json:"functionCall"`
}

// turn counts the functionResponse parts of the conversation.
func (r *geminiRequest) turn() int {
	n := 0
	for _, c := range r.Contents {
		for _, p := range c.Parts {
			if p.FunctionResponse != nil {
				n++
			}
		}
	}
	return n
}

// toolsOffered says whether the request declares a function.
func (r *geminiRequest) toolsOffered() bool {
	for _, t := range r.Tools {
		if len(t.FunctionDeclarations) > 0 {
			return true
		}
	}
	return false
}

// gemini answers a Gemini API request: countTokens with a count; a
// generateContent that gives a response schema with JSON text of that
// schema; else the script's step, streamed on streamGenerateContent.
func (s *Server) gemini(body []byte, kind, path string) (answer, error) {
	var req geminiRequest
	if err := json.Unmarshal(body, &req); err != nil {
		return answer{}, fmt.Errorf("reading a generateContent request: %w", err)
	}
	turn := req.turn()
	usage := map[string]int{"promptTokenCount": len(body)/4 + 1, "candidatesTokenCount": 1, "totalTokenCount": len(body)/4 + 2}
	if kind == "count" {
		b, _ := json.Marshal(map[string]int{"totalTokens": len(body)/4 + 1})
		return answer{contentType: "application/json", body: b, turn: turn, what: "count"}, nil
	}
	modelName := path[strings.LastIndex(path, "/")+1:]
	modelName = modelName[:strings.LastIndex(modelName, ":")]
	var part map[string]any
	what := "text"
	schema := req.GenerationConfig.ResponseJSONSchema
	if schema == nil {
		schema = req.GenerationConfig.ResponseSchema
	}
	results, err := geminiResults(body)
	if err != nil {
		return answer{}, err
	}
	call, text, isCall := s.step(results, req.toolsOffered())
	switch {
	case schema != nil && !isCall:
		b, err := json.Marshal(sample(schema))
		if err != nil {
			return answer{}, fmt.Errorf("answering a response schema: %w", err)
		}
		part, what = map[string]any{"text": string(b)}, "schema"
	case isCall:
		part = map[string]any{"functionCall": map[string]any{"name": call.Name, "args": call.input()}}
		what = call.what()
	default:
		part = map[string]any{"text": text}
	}
	chunk := map[string]any{
		"candidates":    []any{map[string]any{"content": map[string]any{"role": "model", "parts": []any{part}}, "finishReason": "STOP", "index": 0}},
		"usageMetadata": usage,
		"modelVersion":  modelName,
		"responseId":    fmt.Sprintf("scripted_%d", s.nextID()),
	}
	if kind == "json" {
		b, err := json.Marshal(chunk)
		return answer{contentType: "application/json", body: b, turn: turn, what: what, resume: call.resume}, err
	}
	return answer{contentType: "text/event-stream", body: sseBody([]sse{{data: chunk}}), turn: turn, what: what, resume: call.resume}, nil
}

// sample is a value of the schema (OpenAPI or JSON Schema): an object with
// its required properties (all when none is required), an enum's first
// value, and the zero of every other type.
func sample(schema map[string]any) any {
	if enum, ok := schema["enum"].([]any); ok && len(enum) > 0 {
		return enum[0]
	}
	typ, _ := schema["type"].(string)
	switch strings.ToLower(typ) {
	case "object":
		props, _ := schema["properties"].(map[string]any)
		names := map[string]bool{}
		if req, ok := schema["required"].([]any); ok && len(req) > 0 {
			for _, n := range req {
				if s, ok := n.(string); ok {
					names[s] = true
				}
			}
		} else {
			for n := range props {
				names[n] = true
			}
		}
		out := map[string]any{}
		for n := range names {
			p, _ := props[n].(map[string]any)
			out[n] = sample(p)
		}
		return out
	case "array":
		return []any{}
	case "integer", "number":
		return 0
	case "boolean":
		return false
	case "string":
		return "scripted"
	}
	return nil
}

// geminiResults are the tool results of a generateContent request.
func geminiResults(body []byte) ([]ToolResult, error) {
	var req geminiRequest
	if err := json.Unmarshal(body, &req); err != nil {
		return nil, fmt.Errorf("reading a generateContent request: %w", err)
	}
	var out []ToolResult
	for _, c := range req.Contents {
		for _, p := range c.Parts {
			if fr := p.FunctionResponse; fr != nil {
				out = append(out, ToolResult{CallID: fr.ID, Name: fr.Name, Raw: fr.Response, Text: geminiResponseText(fr.Response)})
			}
		}
	}
	return out, nil
}

// geminiResponseText is a functionResponse's response as text: the string
// of a response that holds only "output" or only "error", else its JSON.
func geminiResponseText(resp json.RawMessage) string {
	var m map[string]json.RawMessage
	if json.Unmarshal(resp, &m) == nil && len(m) == 1 {
		for _, k := range []string{"output", "error"} {
			var s string
			if v, ok := m[k]; ok && json.Unmarshal(v, &s) == nil {
				return s
			}
		}
	}
	return string(resp)
}
