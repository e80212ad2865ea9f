package tools

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

// compileSchema compiles raw under JSON Schema Draft 2020-12.
func compileSchema(t *testing.T, name string, raw []byte) *jsonschema.Schema {
	t.Helper()
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(raw))
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	c := jsonschema.NewCompiler()
	c.DefaultDraft(jsonschema.Draft2020)
	c.AssertFormat()
	url := "mem://" + name + ".json"
	if err := c.AddResource(url, doc); err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	s, err := c.Compile(url)
	if err != nil {
		t.Fatalf("%s does not compile under Draft 2020-12: %v", name, err)
	}
	return s
}

func instance(t *testing.T, s string) any {
	t.Helper()
	v, err := jsonschema.UnmarshalJSON(bytes.NewReader([]byte(s)))
	if err != nil {
		t.Fatalf("sample %s: %v", s, err)
	}
	return v
}

const sha = "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"

// A receipt as the agent sends it (docs/mcp-server.md#4.7), with an extra field.
var appliedReceipt = `{"requestId":"r1","sessionId":"s1","className":"app.Main","expectedSha256":"` + sha + `","observedSha256":"` + sha + `","status":"applied","source":"reclazz","detail":"applied","completedAt":"2026-01-01T00:00:00Z","extra":1}`

// outputSample is a valid result object of a tool (docs/mcp-server.md#4.2–4.10)
// and the fields it must carry under its schema's conditional rules, besides
// the schema's top-level required list.
type outputSample struct {
	tool, name, json string
	alsoRequired     []string
}

var outputSamples = []outputSample{
	{ToolStatus, "attached", `{"attached":true,"agent":"reclazz","protocol":1,"port":4000,"health":["Agent healthy"]}`, []string{"agent", "protocol", "port", "health"}},
	{ToolStatus, "attached partial", `{"attached":true,"reason":"Invalid agent response","agent":"reclazz","protocol":1,"port":4000,"health":["a"]}`, nil},
	{ToolStatus, "offline", `{"attached":false,"reason":"invalid port: 65536","port":65536}`, []string{"reason"}},
	{ToolDoctor, "observed", `{"requestId":"d1","status":"observed","detail":"ok","sessionId":"s1","agentVersion":"1.0","pid":"42","javaVersion":"17","vmName":"OpenJDK","workingDirectory":"/w","watcherState":"watching","buildHold":"none","watchedDirectories":["/w/out"],"watchedDirectoryCount":1,"unwatchableDirectoryCount":0,"watchSampleTruncated":false,"buildOwnershipSupported":true,"verifySupported":true,"scanSupported":true,"reloadConfirmed":false,"clientWorkingDirectory":"/w","nextActions":["compare"],"extra":"passes"}`,
		[]string{"requestId", "sessionId", "agentVersion", "pid", "javaVersion", "vmName", "workingDirectory", "watcherState", "buildHold", "watchedDirectories", "watchedDirectoryCount", "unwatchableDirectoryCount", "watchSampleTruncated", "buildOwnershipSupported", "verifySupported", "scanSupported"}},
	{ToolDoctor, "agent unavailable", `{"requestId":"d1","status":"unavailable","detail":"starting","reloadConfirmed":false,"clientWorkingDirectory":"/w","nextActions":["check the port"]}`, nil},
	{ToolDoctor, "failure", `{"status":"unavailable","detail":"Doctor evidence unavailable; check the endpoint and matching agent version.","reloadConfirmed":false,"clientWorkingDirectory":"/w","nextActions":["check"]}`, nil},
	{ToolScan, "sent", `{"status":"sent","detail":"Sent SCAN to the agent. Acceptance and reload completion are not confirmed.","reloadConfirmed":false}`, nil},
	{ToolScan, "unavailable", `{"status":"unavailable","detail":"Scan request failed: x","reloadConfirmed":false}`, nil},
	{ToolPending, "observed", `{"status":"observed","lines":["Nothing from this session needs a restart."],"detail":"Nothing from this session needs a restart.","complete":false}`, nil},
	{ToolPending, "unavailable", `{"status":"unavailable","lines":[],"detail":"Pending query failed: x","complete":false}`, nil},
	{ToolDiagnose, "observed", `{"status":"observed","lines":["l"],"detail":"l","complete":false,"className":"app.Main$Inner"}`, nil},
	{ToolReloadControl, "acknowledged", `{"status":"acknowledged","detail":"snapshot","reloadConfirmed":false,"action":"pause","paused":true,"pendingClasses":0,"pendingActions":2,"buildHold":"named"}`, []string{"paused", "pendingClasses", "pendingActions", "buildHold"}},
	{ToolReloadControl, "unavailable", `{"status":"unavailable","detail":"Reload control not confirmed; state may have changed. Query status before retrying.","reloadConfirmed":false,"action":"status"}`, nil},
	{ToolBuild, "acknowledged", `{"status":"acknowledged","detail":"Acknowledged BUILD started. This is not reload completion.","reloadConfirmed":false,"state":"started","owner":"dev-1"}`, nil},
	{ToolBuild, "unavailable", `{"status":"unavailable","detail":"Build signal not confirmed: x","reloadConfirmed":false,"state":"ok","owner":"dev_1"}`, nil},
	{ToolVerify, "applied", appliedReceipt, []string{"requestId", "sessionId", "observedSha256", "source", "completedAt"}},
	{ToolVerify, "unavailable", `{"status":"unavailable","className":"app.Main","expectedSha256":"` + sha + `","detail":"Reload not verified: no valid correlated receipt"}`, nil},
	{ToolVerifyBatch, "applied", `{"status":"applied","detail":"ordered point-in-time receipts, not atomic","sessionId":"s1","requestedCount":1,"allApplied":true,"atomic":false,"reloadConfirmed":false,"results":[` + appliedReceipt + `]}`, nil},
	{ToolVerifyBatch, "unavailable", `{"status":"unavailable","detail":"ordered point-in-time receipts, not atomic","sessionId":"","requestedCount":2,"allApplied":false,"atomic":false,"reloadConfirmed":false,"results":[` + appliedReceipt + `,{"className":"app.B","expectedSha256":"` + sha + `","status":"unavailable","detail":"No validated receipt"}]}`, nil},
	{ToolSafeBuild, "ok", `{"build":"gradle","command":["./gradlew","classes"],"outcome":"ok","exitCode":0,"durationMs":1200,"owner":"3f1c","detail":"released","diagnostics":[{"severity":"warning","file":"a/src/main/java/A.java","line":5,"column":21,"message":"[deprecation] f() in A has been deprecated","module":"a","task":":a:compileJava"}],"diagnosticsOmitted":0,"errors":0,"warnings":1,"failedTasks":[],"failedModules":[],"output":{"tail":"BUILD SUCCESSFUL\n","lines":9,"truncated":true,"logFile":"/p/.buildguard/logs/20261202T010203456Z-gradle.log"},"changedClasses":{"count":1,"complete":true,"allApplied":true,"classes":[{"className":"app.A","sha256":"` + sha + `","status":"applied","detail":"applied"}]}}`, nil},
	{ToolSafeBuild, "failed", `{"build":"gradle","command":["gradle","classes"],"outcome":"failed","exitCode":1,"durationMs":900,"owner":"3f1c","detail":"exited 1","diagnostics":[{"severity":"error","file":"b/src/main/java/B.java","line":3,"message":"cannot find symbol"},{"severity":"error","message":"Could not resolve dependencies"}],"diagnosticsOmitted":3,"errors":5,"warnings":0,"failedTasks":[":b:compileJava"],"failedModules":["b"],"output":{"tail":"error\n","lines":1,"truncated":false,"logFile":"/p/l.log"},"changedClasses":{"count":0,"complete":false,"allApplied":false,"classes":[]}}`, nil},
}

func toolOutputSchemas(t *testing.T) map[string]*jsonschema.Schema {
	t.Helper()
	out := map[string]*jsonschema.Schema{}
	for _, def := range Definitions() {
		raw, ok := OutputSchema(def.Name) // as tools/list sends it
		if !ok {
			t.Fatalf("%s: no output schema", def.Name)
		}
		out[def.Name] = compileSchema(t, def.Name, raw)
	}
	return out
}

func TestSchemasCompile(t *testing.T) {
	t.Parallel()
	for _, def := range Definitions() {
		in, err := json.Marshal(def.InputSchema)
		if err != nil {
			t.Fatal(err)
		}
		compileSchema(t, def.Name+"-input", in)
		var out map[string]any
		raw, _ := OutputSchema(def.Name)
		_ = json.Unmarshal(raw, &out)
		_, hasDraft := out["$schema"]
		if hasDraft == (def.Name == ToolReloadControl) || out["type"] != "object" {
			t.Errorf("%s: $schema present=%v, type=%v (docs/mcp-server.md#4.11: all but reload_control carry $schema)", def.Name, hasDraft, out["type"])
		}
	}
	if got := len(toolOutputSchemas(t)); got != len(Names()) {
		t.Errorf("%d output schemas, want %d", got, len(Names()))
	}
}

// TestOutputSchemaMutations validates each sample, then checks the schema
// rejects it with a required field deleted or null, status made up, and
// reloadConfirmed or complete set to true.
func TestOutputSchemaMutations(t *testing.T) {
	t.Parallel()
	schemas := toolOutputSchemas(t)
	covered := map[string]bool{}
	for _, smp := range outputSamples {
		s := schemas[smp.tool]
		covered[smp.tool] = true
		name := smp.tool + "/" + smp.name
		if err := s.Validate(instance(t, smp.json)); err != nil {
			t.Errorf("%s: valid sample rejected: %v", name, err)
			continue
		}
		var obj map[string]json.RawMessage
		if err := json.Unmarshal([]byte(smp.json), &obj); err != nil {
			t.Fatal(err)
		}
		var schema struct{ Required []string }
		for _, def := range Definitions() {
			if def.Name == smp.tool {
				raw, _ := OutputSchema(def.Name)
				_ = json.Unmarshal(raw, &schema)
			}
		}
		mutate := func(label string, change func(m map[string]json.RawMessage)) {
			m := map[string]json.RawMessage{}
			for k, v := range obj {
				m[k] = v
			}
			change(m)
			b, _ := json.Marshal(m)
			if err := s.Validate(instance(t, string(b))); err == nil {
				t.Errorf("%s: %s was accepted: %s", name, label, b)
			}
		}
		for _, f := range append(slices.Clone(schema.Required), smp.alsoRequired...) {
			if _, ok := obj[f]; !ok {
				t.Fatalf("%s: sample lacks required %s", name, f)
			}
			mutate("deleting "+f, func(m map[string]json.RawMessage) { delete(m, f) })
			mutate(f+":null", func(m map[string]json.RawMessage) { m[f] = json.RawMessage("null") })
		}
		for field, bad := range map[string]string{"status": `"made_up_status"`, "reloadConfirmed": "true", "complete": "true", "atomic": "true"} {
			if _, ok := obj[field]; ok {
				mutate(fmt.Sprintf("%s:%s", field, bad), func(m map[string]json.RawMessage) { m[field] = json.RawMessage(bad) })
			}
		}
	}
	for _, name := range Names() {
		if !covered[name] {
			t.Errorf("no sample for %s", name)
		}
	}
}

// TestOutputSchemaConditionals covers the rules that tie fields together.
func TestOutputSchemaConditionals(t *testing.T) {
	t.Parallel()
	schemas := toolOutputSchemas(t)
	rejected := []struct{ tool, why, json string }{
		{ToolVerifyBatch, "applied but allApplied false", `{"status":"applied","detail":"d","sessionId":"s","requestedCount":1,"allApplied":false,"atomic":false,"reloadConfirmed":false,"results":[` + appliedReceipt + `]}`},
		{ToolVerifyBatch, "applied with blank sessionId", `{"status":"applied","detail":"d","sessionId":"","requestedCount":1,"allApplied":true,"atomic":false,"reloadConfirmed":false,"results":[` + appliedReceipt + `]}`},
		{ToolVerifyBatch, "incomplete but allApplied", `{"status":"incomplete","detail":"d","sessionId":"s","requestedCount":1,"allApplied":true,"atomic":false,"reloadConfirmed":false,"results":[` + appliedReceipt + `]}`},
		{ToolVerifyBatch, "33 requested", `{"status":"incomplete","detail":"d","sessionId":"s","requestedCount":33,"allApplied":false,"atomic":false,"reloadConfirmed":false,"results":[` + appliedReceipt + `]}`},
		{ToolReloadControl, "extra property", `{"status":"unavailable","detail":"d","reloadConfirmed":false,"action":"pause","extra":1}`},
		{ToolReloadControl, "acknowledged without counts", `{"status":"acknowledged","detail":"d","reloadConfirmed":false,"action":"pause"}`},
		{ToolVerify, "upper-case sha", `{"status":"unavailable","className":"a","expectedSha256":"` + "ABCDEF" + sha[6:] + `","detail":"d"}`},
		{ToolVerify, "mismatch without receipt fields", `{"status":"mismatch","className":"a","expectedSha256":"` + sha + `","detail":"d"}`},
		{ToolBuild, "bad owner", `{"status":"unavailable","detail":"d","reloadConfirmed":false,"state":"ok","owner":"a/b"}`},
		{ToolStatus, "protocol 2", `{"attached":true,"agent":"a","protocol":2,"port":1,"health":[]}`},
		{ToolDoctor, "nine watched directories", `{"status":"unavailable","detail":"d","reloadConfirmed":false,"clientWorkingDirectory":"/","nextActions":[],"watchedDirectories":["a","b","c","d","e","f","g","h","i"]}`},
	}
	for _, r := range rejected {
		if err := schemas[r.tool].Validate(instance(t, r.json)); err == nil {
			t.Errorf("%s: %s accepted", r.tool, r.why)
		}
	}
}

// TestSchemasUseOneTypePerSchema: no input or output schema gives `type` as
// an array (["integer","null"]); nullable values are anyOf branches of one
// type each, which single-type dialects such as Gemini's function
// declarations accept (docs/safe-build.md#12; the MCP Inspector's --strict
// check warns about type arrays).
func TestSchemasUseOneTypePerSchema(t *testing.T) {
	t.Parallel()
	var walk func(tool, path string, v any)
	walk = func(tool, path string, v any) {
		switch v := v.(type) {
		case map[string]any:
			for k, x := range v {
				if _, isArray := x.([]any); k == "type" && isArray {
					t.Errorf("%s: %s/type is an array: %v", tool, path, x)
				}
				walk(tool, path+"/"+k, x)
			}
		case []any:
			for i, x := range v {
				walk(tool, fmt.Sprintf("%s/%d", path, i), x)
			}
		}
	}
	for _, def := range Definitions() {
		out, _ := OutputSchema(def.Name)
		for _, schema := range []any{def.InputSchema, out} {
			raw, err := json.Marshal(schema)
			if err != nil {
				t.Fatal(err)
			}
			var v any
			if err := json.Unmarshal(raw, &v); err != nil {
				t.Fatal(err)
			}
			walk(def.Name, "", v)
		}
	}
}
