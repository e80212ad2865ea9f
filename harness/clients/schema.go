//go:build unix

package clients

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"sort"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

// ToolNames are the ten tools, sorted.
var ToolNames = []string{
	"reclazz_build",
	"reclazz_diagnose",
	"reclazz_doctor",
	"reclazz_pending",
	"reclazz_reload_control",
	"reclazz_safe_build",
	"reclazz_scan",
	"reclazz_status",
	"reclazz_verify",
	"reclazz_verify_batch",
}

// Errors of the shape checks.
var (
	// ErrSchema means a result does not validate against its tool's output schema.
	ErrSchema = errors.New("result does not match the output schema")
	// ErrNoWitness means a mutated result (a required field deleted) still
	// validated, so the schema check could not fail.
	ErrNoWitness = errors.New("mutated result still validates")
	// ErrShape means a result has the wrong shape for the session's version.
	ErrShape = errors.New("wrong result shape")
)

// Schemas are the compiled output schemas of the ten tools plus their
// required lists (for the negative witnesses).
type Schemas struct {
	compiled map[string]*jsonschema.Schema
	required map[string][]string
}

// CompileSchemas compiles every tool's outputSchema as Draft 2020-12. It
// fails when a tool lacks one or a schema does not compile.
func CompileSchemas(tools []ToolInfo) (*Schemas, error) {
	s := &Schemas{compiled: map[string]*jsonschema.Schema{}, required: map[string][]string{}}
	for _, t := range tools {
		if len(t.OutputSchema) == 0 {
			return nil, fmt.Errorf("%w: %s has no outputSchema", ErrShape, t.Name)
		}
		doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(t.OutputSchema))
		if err != nil {
			return nil, fmt.Errorf("decoding outputSchema of %s: %w", t.Name, err)
		}
		c := jsonschema.NewCompiler()
		c.DefaultDraft(jsonschema.Draft2020)
		url := "mem:///" + t.Name + ".json"
		if err := c.AddResource(url, doc); err != nil {
			return nil, fmt.Errorf("loading outputSchema of %s: %w", t.Name, err)
		}
		sch, err := c.Compile(url)
		if err != nil {
			return nil, fmt.Errorf("compiling outputSchema of %s: %w", t.Name, err)
		}
		var top struct {
			Required []string `json:"required"`
		}
		if err := json.Unmarshal(t.OutputSchema, &top); err != nil {
			return nil, fmt.Errorf("reading required of %s: %w", t.Name, err)
		}
		if len(top.Required) == 0 {
			return nil, fmt.Errorf("%w: outputSchema of %s has no required field to delete", ErrShape, t.Name)
		}
		s.compiled[t.Name], s.required[t.Name] = sch, top.Required
	}
	return s, nil
}

// Validate validates data (JSON) against tool's schema, then deletes the
// schema's first required field from a copy and requires that copy to be
// rejected. It returns the number of negative witnesses (1 on success).
func (s *Schemas) Validate(tool string, data json.RawMessage) (int, error) {
	sch, ok := s.compiled[tool]
	if !ok {
		return 0, fmt.Errorf("no output schema for %s", tool)
	}
	inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(data))
	if err != nil {
		return 0, fmt.Errorf("decoding %s result: %w", tool, err)
	}
	if err := sch.Validate(inst); err != nil {
		return 0, fmt.Errorf("%w: %s: %v", ErrSchema, tool, err)
	}
	obj, ok := inst.(map[string]any)
	if !ok {
		return 0, fmt.Errorf("%w: %s result is not an object", ErrShape, tool)
	}
	field := s.required[tool][0]
	mutated := make(map[string]any, len(obj))
	for k, v := range obj {
		if k != field {
			mutated[k] = v
		}
	}
	if err := sch.Validate(mutated); err == nil {
		return 0, fmt.Errorf("%w: %s without %q", ErrNoWitness, tool, field)
	}
	return 1, nil
}

// SameJSON reports whether a and b encode the same JSON value (key order and
// number spelling aside).
func SameJSON(a, b []byte) (bool, error) {
	var va, vb any
	da := json.NewDecoder(bytes.NewReader(a))
	da.UseNumber()
	if err := da.Decode(&va); err != nil {
		return false, err
	}
	db := json.NewDecoder(bytes.NewReader(b))
	db.UseNumber()
	if err := db.Decode(&vb); err != nil {
		return false, err
	}
	return reflect.DeepEqual(normNumbers(va), normNumbers(vb)), nil
}

// normNumbers turns json.Number into float64 so 1 and 1.0 compare equal.
func normNumbers(v any) any {
	switch x := v.(type) {
	case json.Number:
		f, err := x.Float64()
		if err != nil {
			return x.String()
		}
		return f
	case map[string]any:
		for k, e := range x {
			x[k] = normNumbers(e)
		}
	case []any:
		for i, e := range x {
			x[i] = normNumbers(e)
		}
	}
	return v
}

// toolNames returns the sorted names of tools.
func toolNames(tools []ToolInfo) []string {
	var n []string
	for _, t := range tools {
		n = append(n, t.Name)
	}
	sort.Strings(n)
	return n
}
