// Package toolstest checks tool results against the tools' output schemas
// (JSON Schema 2020-12, docs/mcp-server.md#4.11, with format assertions),
// for the tests of every package that produces results: the tool service
// (service/tools) and the MCP server (mcp). It is test-only: product code never
// imports it.
package toolstest

import (
	"bytes"
	"fmt"
	"sync"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/buildguard/buildguard/service/tools"
)

var (
	once     sync.Once
	compiled map[string]*jsonschema.Schema
	failed   error
)

// OutputSchemas returns every tool's compiled output schema, by tool name.
// They are compiled once; an error means a schema does not compile.
func OutputSchemas() (map[string]*jsonschema.Schema, error) {
	once.Do(func() { compiled, failed = compile() })
	return compiled, failed
}

func compile() (map[string]*jsonschema.Schema, error) {
	out := map[string]*jsonschema.Schema{}
	for _, def := range tools.Definitions() {
		raw, ok := tools.OutputSchema(def.Name)
		if !ok {
			return nil, fmt.Errorf("%s: no output schema", def.Name)
		}
		doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(raw))
		if err != nil {
			return nil, fmt.Errorf("%s: %w", def.Name, err)
		}
		c := jsonschema.NewCompiler()
		c.DefaultDraft(jsonschema.Draft2020)
		c.AssertFormat()
		url := "mem://" + def.Name + ".json"
		if err := c.AddResource(url, doc); err != nil {
			return nil, fmt.Errorf("%s: %w", def.Name, err)
		}
		if out[def.Name], err = c.Compile(url); err != nil {
			return nil, fmt.Errorf("%s: %w", def.Name, err)
		}
	}
	return out, nil
}

// Validate checks data, one result object of tool, against the tool's
// output schema; a tool without one is an error.
func Validate(tool string, data []byte) error {
	all, err := OutputSchemas()
	if err != nil {
		return err
	}
	s, ok := all[tool]
	if !ok {
		return fmt.Errorf("no output schema for %s", tool)
	}
	inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(data))
	if err != nil {
		return fmt.Errorf("%s result is not JSON: %w", tool, err)
	}
	return s.Validate(inst)
}
