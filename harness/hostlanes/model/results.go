package model

import (
	"encoding/json"
	"fmt"
	"regexp"
)

// ToolResult is what a host handed its model back for one tool call.
type ToolResult struct {
	// CallID is the id of the call it answers (empty where the wire has none).
	CallID string `json:"callId,omitempty"`
	// Name is the called tool's name as the host presented it, when the
	// conversation holds the call (OpenAI: "namespace/name").
	Name string `json:"name,omitempty"`
	// IsError is the Messages API's is_error flag; the other wires have none.
	IsError bool `json:"isError,omitempty"`
	// Text is the result as the model reads it: the text parts one after
	// another, any other part as its JSON.
	Text string `json:"text"`
	// Raw is the result exactly as the host sent it.
	Raw json.RawMessage `json:"raw,omitempty"`
}

// ToolResults returns the tool results r's conversation holds, oldest
// first; none for a request the server does not serve.
func ToolResults(r Request) ([]ToolResult, error) {
	switch r.Wire {
	case Anthropic:
		return anthropicResults(r.Body)
	case OpenAI:
		return openAIResults(r.Body)
	case Gemini:
		return geminiResults(r.Body)
	}
	return nil, nil
}

// LastResults returns the tool results of the last request that holds the
// most of them: what the model received by the end of the run. It is an
// error when no request holds one.
func LastResults(reqs []Request) ([]ToolResult, error) {
	var best []ToolResult
	for _, r := range reqs {
		if r.Turn == 0 || r.Turn < len(best) {
			continue
		}
		res, err := ToolResults(r)
		if err != nil {
			return nil, fmt.Errorf("reading request %d: %w", r.Seq, err)
		}
		best = res
	}
	if len(best) == 0 {
		return nil, fmt.Errorf("no request of %d held a tool result", len(reqs))
	}
	return best, nil
}

// The ways a tool result says a safe build is still running, and names the
// build's id (docs/safe-build.md#14): the text's first line
// (`build "NAME": running after 2s; buildId ID`), or the structured
// result's fields, also as JSON quoted inside a JSON string (Gemini CLI's
// error string), whatever a host puts before them (Codex's "Wall time"
// line, Gemini CLI's <untrusted_context>).
var (
	runningText = regexp.MustCompile(`\\*": running after [^;\n]*; buildId ([0-9a-f]{32})\b`)
	runningJSON = regexp.MustCompile(`\\*"outcome\\*":\s*\\*"running\\*"`)
	buildIDJSON = regexp.MustCompile(`\\*"buildId\\*":\s*\\*"([0-9a-f]{32})\\*"`)
)

// RunningBuildID returns the buildId of a running answer of
// reclazz_safe_build in text, a tool result as the model read it; ok is
// false when text is no running answer.
func RunningBuildID(text string) (id string, ok bool) {
	if m := runningText.FindStringSubmatch(text); m != nil {
		return m[1], true
	}
	if !runningJSON.MatchString(text) {
		return "", false
	}
	if m := buildIDJSON.FindStringSubmatch(text); m != nil {
		return m[1], true
	}
	return "", false
}
