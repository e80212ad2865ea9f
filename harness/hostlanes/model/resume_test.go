package model

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
)

// runningID is the buildId of the recorded running answers below.
const runningID = "b2ac45d6bd690f1c4a32ace5ea472340"

// The shapes in which each host handed its model a running answer and the
// build's final result, as the host lanes recorded them (shortened):
// Claude Code 2.1.332 the structured result as a string, Codex 0.171.0 the
// structured result after its "Wall time" line, Gemini CLI 0.61.0 the text
// in <untrusted_context> as a functionResponse's output.
var (
	recRunningJSON = `{"outcome":"running","buildId":"` + runningID + `","exitCode":null,"errors":0,"warnings":0,"diagnostics":[],"detail":"the build goes on without this call, which stopped waiting after 2s as answerWithinMs (or the server's --answer-within) asks; nothing was released yet. Call reclazz_safe_build again with resume \"` + runningID + `\" (nothing else is needed) to wait for its result","changedClasses":{"count":0,"complete":false,"allApplied":false,"classes":[]},"build":"slow"}`
	recRunningText = "build \"slow\": running after 2s; buildId " + runningID + "\nthe build goes on without this call, which stopped waiting after 2s as answerWithinMs (or the server's --answer-within) asks; nothing was released yet. Call reclazz_safe_build again with resume \"" + runningID + "\" (nothing else is needed)\n"
	okJSON         = `{"outcome":"ok","exitCode":0,"errors":0,"warnings":0,"diagnostics":[],"detail":"the build exited 0 and BUILD ok was acknowledged","changedClasses":{"count":1,"complete":true,"allApplied":true,"classes":[{"className":"Service","sha256":"5a852c310b6486a5546310fb5f630f0c7bd4e43731c57521639ca9136936ded9","status":"applied"}]},"build":"slow"}`
	claudeRunning  = recRunningJSON
	codexRunning   = "Wall time: 2.0095 seconds\nOutput:\n" + recRunningJSON
	geminiRunning  = "<untrusted_context>\n" + recRunningText + "\n</untrusted_context>"
	geminiErrorRun = `MCP tool 'reclazz_safe_build' reported tool error for function call: {"name":"reclazz_safe_build","args":{"resume":"x"}} with response: [{"functionResponse":{"name":"reclazz_safe_build","response":{"content":[{"type":"text","text":"{\"outcome\":\"running\",\"buildId\":\"` + runningID + `\"}"}]}}}]`
)

func TestRunningBuildID(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name, text string
		ok         bool
	}{
		{"claude structured result", claudeRunning, true},
		{"claude text", recRunningText, true},
		{"codex after Wall time", codexRunning, true},
		{"gemini output", geminiRunning, true},
		{"gemini JSON quoted in an error string", geminiErrorRun, true},
		{"the final result", okJSON, false},
		{"codex final result", "Wall time: 1.4889 seconds\nOutput:\n" + okJSON, false},
		{"an ok that quotes a resume id", `{"outcome":"ok","detail":"resume \"` + runningID + `\""}`, false},
		{"running without an id", `{"outcome":"running","exitCode":null}`, false},
		{"an id one digit short", `{"outcome":"running","buildId":"` + runningID[1:] + `"}`, false},
		{"a timeout", `MCP server "buildguard" tool "reclazz_safe_build" timed out after 6s`, false},
	} {
		id, ok := RunningBuildID(c.text)
		if ok != c.ok || (ok && id != runningID) {
			t.Errorf("%s: RunningBuildID = %q, %v; want %v", c.name, id, ok, c.ok)
		}
	}
}

// wireCase drives one wire: the request whose conversation holds the
// results given, and the call (name and input) or the text its answer holds.
type wireCase struct {
	wire    Wire
	path    string
	call    Call
	shape   string // the running answer as the host hands it
	request func(results []string) any
	answer  func(t *testing.T, body []byte) (name, input, text string)
}

var resumeWires = []wireCase{
	{
		wire: Anthropic, path: "/v1/messages", shape: claudeRunning,
		call: Call{Name: "mcp__buildguard__reclazz_safe_build", Input: safeBuild},
		request: func(results []string) any {
			msgs := []any{map[string]any{"role": "user", "content": "build"}}
			for i, r := range results {
				id := fmt.Sprintf("toolu_%d", i)
				msgs = append(msgs,
					map[string]any{"role": "assistant", "content": []any{map[string]any{"type": "tool_use", "id": id, "name": "mcp__buildguard__reclazz_safe_build", "input": map[string]any{}}}},
					map[string]any{"role": "user", "content": []any{map[string]any{"type": "tool_result", "tool_use_id": id, "content": r}}})
			}
			return map[string]any{"model": "m", "stream": true, "messages": msgs, "tools": []any{map[string]any{"name": "x"}}}
		},
		answer: func(t *testing.T, body []byte) (string, string, string) {
			_, name, input, text, _ := anthropicStream(t, body)
			return name, input, text
		},
	},
	{
		wire: OpenAI, path: "/v1/responses", shape: codexRunning,
		call: Call{Name: "reclazz_safe_build", Namespace: "mcp__buildguard", Input: safeBuild},
		request: func(results []string) any {
			input := []any{map[string]any{"type": "message", "role": "user", "content": []any{map[string]any{"type": "input_text", "text": "build"}}}}
			for i, r := range results {
				id := fmt.Sprintf("call_%d", i)
				input = append(input,
					map[string]any{"type": "function_call", "call_id": id, "name": "reclazz_safe_build", "namespace": "mcp__buildguard", "arguments": "{}"},
					map[string]any{"type": "function_call_output", "call_id": id, "output": r})
			}
			return map[string]any{"model": "m", "stream": true, "input": input, "tools": []any{map[string]any{"type": "namespace"}}}
		},
		answer: func(t *testing.T, body []byte) (string, string, string) {
			item, delta := responsesStream(t, body)
			if item["type"] != "function_call" {
				return "", "", delta
			}
			if item["namespace"] != "mcp__buildguard" {
				t.Errorf("call %v has lost its namespace", item)
			}
			return item["name"].(string), item["arguments"].(string), ""
		},
	},
	{
		wire: Gemini, path: "/v1beta/models/g:streamGenerateContent?alt=sse", shape: geminiRunning,
		call: Call{Name: "mcp_buildguard_reclazz_safe_build", Input: safeBuild},
		request: func(results []string) any {
			contents := []any{map[string]any{"role": "user", "parts": []any{map[string]any{"text": "build"}}}}
			for _, r := range results {
				contents = append(contents,
					map[string]any{"role": "model", "parts": []any{map[string]any{"functionCall": map[string]any{"name": "mcp_buildguard_reclazz_safe_build"}}}},
					map[string]any{"role": "user", "parts": []any{map[string]any{"functionResponse": map[string]any{"name": "mcp_buildguard_reclazz_safe_build", "response": map[string]any{"output": r}}}}})
			}
			return map[string]any{"contents": contents, "tools": []any{map[string]any{"functionDeclarations": []any{map[string]any{"name": "x"}}}}}
		},
		answer: func(t *testing.T, body []byte) (string, string, string) {
			evs := readSSE(t, body)
			part := get(evs[0].data, "candidates", 0, "content", "parts", 0)
			if text, ok := get(part, "text").(string); ok {
				return "", "", text
			}
			args, _ := json.Marshal(get(part, "functionCall", "args"))
			name, _ := get(part, "functionCall", "name").(string)
			return name, string(args), ""
		},
	},
}

// On every wire, the model resumes a running answer with the id the host
// handed it, in that host's recorded shape, at most Script.Resumes times;
// it ends with text after the build's own result.
func TestResumeLoopOnEveryWire(t *testing.T) {
	t.Parallel()
	for _, w := range resumeWires {
		t.Run(string(w.wire), func(t *testing.T) {
			t.Parallel()
			s := start(t, Config{Script: Script{Calls: []Call{w.call}, Resumes: 2, Final: "built"}})
			steps := []struct {
				results []string
				resume  bool // else the final text
			}{
				{[]string{w.shape}, true},
				{[]string{w.shape, w.shape}, true},
				{[]string{w.shape, w.shape, w.shape}, false}, // two resumes made: the bound
				{[]string{w.shape, okJSON}, false},
				{[]string{`{"outcome":"failed","exitCode":1}`}, false},
			}
			for i, st := range steps {
				code, body, _ := post(t, s, w.path, w.request(st.results), nil)
				if code != http.StatusOK {
					t.Fatalf("step %d: status %d: %s", i, code, body)
				}
				name, input, text := w.answer(t, body)
				switch {
				case st.resume && (name != w.call.Name || input != `{"resume":"`+runningID+`"}`):
					t.Errorf("step %d: answered %q %s %q, want %s resuming %s", i, name, input, text, w.call.Name, runningID)
				case !st.resume && text != "built":
					t.Errorf("step %d: answered %q %s %q, want the final text", i, name, input, text)
				}
			}
			reqs := s.Requests()
			var answers []string
			for _, r := range reqs {
				answers = append(answers, r.Answer+" "+r.Resume)
			}
			want := "resume " + w.call.Name + " " + runningID
			if got := strings.Join(answers, "|"); got != want+"|"+want+"|text |text |text " {
				t.Errorf("recorded answers %q", got)
			}
		})
	}
}
