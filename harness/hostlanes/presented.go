//go:build unix

package hostlanes

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/buildguard/buildguard/harness/hostlanes/model"
	"github.com/buildguard/buildguard/mcp"
	"github.com/buildguard/buildguard/service/tools"
)

// safeBuildTool is reclazz_safe_build's name in tools/list.
const safeBuildTool = "reclazz_safe_build"

// introBytes is how much of what stands before the instructions the
// record keeps: how the host introduces them to its model.
const introBytes = 160

// Presented is how the host presented buildguard to its model.
type Presented struct {
	// InstructionsIntro is what stands before buildguard's initialize
	// instructions in the string that holds them (a system prompt, say).
	InstructionsIntro string `json:"instructionsIntro,omitempty"`
	// InstructionsRequest is the first request that held them; 0 for none.
	InstructionsRequest int `json:"instructionsRequest"`
	// DescriptionRequest is the first request that held the safe build's
	// description as buildguard wrote it; 0 for none.
	DescriptionRequest int `json:"descriptionRequest"`
}

// presentedChecks check that buildguard's initialize instructions and the
// safe build's description reached the model unchanged, the description no
// later than the request the model answered with the safe build's call.
func presentedChecks(reqs []model.Request, call string) ([]Check, Presented) {
	var p Presented
	desc := safeBuildDescription()
	asked := 0
	for _, r := range reqs {
		if asked == 0 && r.Answer == "call "+call {
			asked = r.Seq
		}
		for _, s := range jsonStrings(r.Body) {
			if i := strings.Index(s, mcp.Instructions); i >= 0 && p.InstructionsRequest == 0 {
				p.InstructionsRequest = r.Seq
				p.InstructionsIntro = s[max(0, i-introBytes):i]
			}
			if desc != "" && p.DescriptionRequest == 0 && strings.Contains(s, desc) {
				p.DescriptionRequest = r.Seq
			}
		}
	}
	instr := Check{Name: "instructions-reached-model", OK: p.InstructionsRequest > 0,
		Detail: fmt.Sprintf("no request of %d held buildguard's instructions unchanged", len(reqs))}
	switch {
	case instr.OK && strings.TrimSpace(p.InstructionsIntro) == "":
		instr.Detail = fmt.Sprintf("request %d, at the start of a string of their own", p.InstructionsRequest)
	case instr.OK:
		instr.Detail = fmt.Sprintf("request %d, after %q", p.InstructionsRequest, cut(lastLine(p.InstructionsIntro), 80))
	}
	d := Check{Name: "description-reached-model", OK: p.DescriptionRequest > 0 && asked > 0 && p.DescriptionRequest <= asked}
	d.Detail = fmt.Sprintf("the description first in request %d; the model asked for %s in request %d", p.DescriptionRequest, call, asked)
	return []Check{instr, d}, p
}

// safeBuildDescription is reclazz_safe_build's description in tools/list.
func safeBuildDescription() string {
	for _, t := range tools.Definitions() {
		if t.Name == safeBuildTool {
			return t.Description
		}
	}
	return ""
}

// jsonStrings are every string value of a JSON document.
func jsonStrings(doc json.RawMessage) []string {
	var v any
	if json.Unmarshal(doc, &v) != nil {
		return nil
	}
	var out []string
	var walk func(any)
	walk = func(v any) {
		switch v := v.(type) {
		case string:
			out = append(out, v)
		case []any:
			for _, e := range v {
				walk(e)
			}
		case map[string]any:
			for _, e := range v {
				walk(e)
			}
		}
	}
	walk(v)
	return out
}

// lastLine is the last non-empty line of s.
func lastLine(s string) string {
	lines := strings.Split(strings.TrimRight(s, "\n "), "\n")
	return lines[len(lines)-1]
}
