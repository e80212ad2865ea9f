package tools_test

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/buildguard/buildguard/service/tools"
	"github.com/buildguard/buildguard/service/tools/toolstest"
)

// checkSchema validates a tool result against the tool's output schema:
// every result these tests produce, error results included, must hold.
func checkSchema(t *testing.T, name string, res tools.Result) {
	t.Helper()
	all, err := toolstest.OutputSchemas()
	if err != nil {
		t.Fatalf("compiling output schemas: %v", err)
	}
	if _, ok := all[name]; !ok {
		return // an unknown tool has no result to check
	}
	if err := toolstest.Validate(name, res.Data); err != nil {
		t.Errorf("%s result %s breaks its output schema: %v", name, res.Data, err)
	}
	if !json.Valid(res.Data) || res.LegacyText == "" {
		t.Errorf("%s result lacks data or legacy text", name)
	}
}

// TestSchemaCheckRejects shows the check above can fail.
func TestSchemaCheckRejects(t *testing.T) {
	all, err := toolstest.OutputSchemas()
	if err != nil {
		t.Fatal(err)
	}
	for name, bad := range map[string]string{
		tools.ToolScan:   `{"status":"sent","detail":"x","reloadConfirmed":true}`,
		tools.ToolStatus: `{"attached":true,"reason":"x"}`,
		tools.ToolBuild:  `{"status":"made_up_status","state":"ok","detail":"x","reloadConfirmed":false,"owner":"o"}`,
	} {
		inst, _ := jsonschema.UnmarshalJSON(bytes.NewReader([]byte(bad)))
		if all[name].Validate(inst) == nil {
			t.Errorf("%s schema accepted %s", name, bad)
		}
	}
}
