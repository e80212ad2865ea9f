package tools

import (
	"encoding/json"
	"fmt"
	"sync"

	"github.com/buildguard/buildguard/agentproto"
)

// passThrough is the documented pass-through of agent data
// (docs/decisions.md#D13, docs/mcp-server.md#4.7, docs/mcp-server.md#4.8).
// Results carry only the fields their output schema declares, except the
// doctor evidence and the verify receipts (reclazz_verify and each result of
// reclazz_verify_batch), whose schemas allow extra properties: those carry
// the agent's object as received, its own extra fields included. An agent
// field whose name another tool's result declares and this result does not
// (reloadConfirmed or allApplied in a receipt, say) is never passed
// through: an agent can add fields of its own, never one of buildguard's
// claims. For each tool, the names it drops; read-only once built.
type passThrough map[string]map[string]bool

// sharedPassThrough is the pass-through of [All], derived once, at the first
// result that passes agent data through (docs/performance.md#2).
var sharedPassThrough = sync.OnceValue(func() passThrough { return newPassThrough(all()) })

// newPassThrough derives, from the output schemas of tools, which agent
// fields each tool's pass-through drops: those some other schema declares
// and its own does not.
func newPassThrough(tools []*Tool) passThrough {
	declared := map[string]map[string]bool{}
	all := map[string]bool{}
	for _, t := range tools {
		declared[t.Name] = t.declaredFields()
		for k := range declared[t.Name] {
			all[k] = true
		}
	}
	p := passThrough{}
	for _, t := range tools {
		drop := map[string]bool{}
		for k := range all {
			if !declared[t.Name][k] {
				drop[k] = true
			}
		}
		p[t.Name] = drop
	}
	return p
}

// filter returns the agent object o as tool's result passes it through.
func (p passThrough) filter(tool string, o agentproto.Object) agentproto.Object {
	drop := p[tool]
	out := make(agentproto.Object, 0, len(o))
	for _, m := range o {
		if !drop[m.Key] {
			out = append(out, m)
		}
	}
	return out
}

// declaredFields are the top-level properties of the tool's output schema.
// An invalid schema is a build defect, caught by the toolsnaps.
func (t *Tool) declaredFields() map[string]bool {
	var s struct {
		Properties map[string]json.RawMessage `json:"properties"`
	}
	if err := json.Unmarshal([]byte(t.outputSchema), &s); err != nil {
		panic(fmt.Sprintf("output schema of %s: %v", t.Name, err))
	}
	fields := map[string]bool{}
	for k := range s.Properties {
		fields[k] = true
	}
	return fields
}
