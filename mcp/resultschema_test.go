package mcp_test

import (
	"bytes"
	"encoding/json"
	"sync"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/buildguard/buildguard/mcp"
)

var (
	schemasOnce sync.Once
	schemas     map[string]*jsonschema.Schema
	schemasErr  error
)

// outputSchemas compiles the output schemas once (Draft 2020-12).
func outputSchemas() (map[string]*jsonschema.Schema, error) {
	schemasOnce.Do(func() {
		schemas = map[string]*jsonschema.Schema{}
		c := jsonschema.NewCompiler()
		c.DefaultDraft(jsonschema.Draft2020)
		for _, name := range mcp.ToolNames() {
			raw, ok := mcp.OutputSchema(name)
			if !ok {
				schemasErr = &mcp.ArgError{Message: "no output schema for " + name}
				return
			}
			doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(raw))
			if err != nil {
				schemasErr = err
				return
			}
			url := "mem://" + name + ".json"
			if err := c.AddResource(url, doc); err != nil {
				schemasErr = err
				return
			}
			if schemas[name], err = c.Compile(url); err != nil {
				schemasErr = err
				return
			}
		}
	})
	return schemas, schemasErr
}

// checkSchema validates a tool result against the tool's output schema:
// every result these tests produce, error results included, must hold.
func checkSchema(t *testing.T, name string, res mcp.Result) {
	t.Helper()
	all, err := outputSchemas()
	if err != nil {
		t.Fatalf("compiling output schemas: %v", err)
	}
	s, ok := all[name]
	if !ok {
		return // an unknown tool has no result to check
	}
	inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(res.Data))
	if err != nil {
		t.Fatalf("%s result is not JSON: %v", name, err)
	}
	if err := s.Validate(inst); err != nil {
		t.Errorf("%s result %s breaks its output schema: %v", name, res.Data, err)
	}
	if !json.Valid(res.Data) || res.LegacyText == "" {
		t.Errorf("%s result lacks data or legacy text", name)
	}
}

// TestSchemaCheckRejects shows the check above can fail.
func TestSchemaCheckRejects(t *testing.T) {
	all, err := outputSchemas()
	if err != nil {
		t.Fatal(err)
	}
	for name, bad := range map[string]string{
		mcp.ToolScan:   `{"status":"sent","detail":"x","reloadConfirmed":true}`,
		mcp.ToolStatus: `{"attached":true,"reason":"x"}`,
		mcp.ToolBuild:  `{"status":"made_up_status","state":"ok","detail":"x","reloadConfirmed":false,"owner":"o"}`,
	} {
		inst, _ := jsonschema.UnmarshalJSON(bytes.NewReader([]byte(bad)))
		if all[name].Validate(inst) == nil {
			t.Errorf("%s schema accepted %s", name, bad)
		}
	}
}
