package tools

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"sync"
	"time"

	sdkmcp "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/buildguard/buildguard/agentproto"
)

// Tool is everything about one reclazz_* tool: its tools/list definition
// (name, description, input and output schema, annotations), its default
// timeout, its own argument checks and handler, and its command-line form.
// Each tool is built by one constructor in its own file (tool_*.go); [All]
// lists them, and the MCP server and the CLI both iterate that list.
type Tool struct {
	// Name is the tool's name, e.g. "reclazz_status".
	Name string
	// CLI is the tool's command-line subcommand.
	CLI CLIForm

	description string
	// inputSchema builds the input schema. A process does not call it: the
	// encoded schemas of schemas_gen.go stand for it, generated from it and
	// checked against it by TestGeneratedSchemas (docs/performance.md#2).
	inputSchema  func() agentproto.Object
	outputSchema string // JSON Schema 2020-12 (docs/mcp-server.md#4.11), any layout
	// compactInput and compactOutput are the two schemas as tools/list
	// sends them, taken by [All] from schemas_gen.go.
	compactInput, compactOutput json.RawMessage
	annotations                 *sdkmcp.ToolAnnotations
	// timeout is the default timeoutMs (docs/decisions.md#D7).
	timeout time.Duration
	// check runs the tool's own argument checks after the common ones; nil
	// means none.
	check func(c *toolCall) error
	// run performs the call. Agent failures are results with IsError; an
	// error is a broken invariant.
	run func(ctx context.Context, c *toolCall) (Result, error)
}

// CLIForm is how a tool is called on the command line: `buildguard COMMAND
// USAGE [endpoint flags]`, printing the tool's result object (docs/decisions.md#D2).
type CLIForm struct {
	// Command is the subcommand, e.g. "verify-batch".
	Command string
	// Usage describes the positional arguments and own flags, e.g.
	// "CLASS (SHA256 | --class-file FILE)"; empty when there are none.
	Usage string
	// Flags maps the subcommand's own flags (besides the endpoint flags) to
	// the names Args receives them under, e.g. "--class-file": "classFile".
	// Nil means none.
	Flags map[string]string
	// Args turns the positional arguments and own flags into the tool's
	// arguments; an error is a usage error.
	Args func(pos []string, own map[string]string) (map[string]any, error)
}

// The default timeouts of docs/decisions.md#D7: the tools that only send one query
// (status, scan, pending, diagnose) and the session tools that wait for a
// correlated reply (doctor, reload_control, build, verify, verify_batch).
const (
	simpleTimeout  = 2000 * time.Millisecond
	sessionTimeout = 5000 * time.Millisecond
)

// All returns the tools in tools/list order (docs/mcp-server.md#4.1). Adding a
// tool means adding its constructor here, in its own file, and running
// go generate (TestGeneratedSchemas fails until then). The list is built
// once per process, with the schemas encoded when the binary was built:
// every server, service and CLI command of a process shares the same
// read-only tools (docs/performance.md#2); the slice is the caller's.
func All() []*Tool { return slices.Clone(all()) }

//go:generate go test -run ^TestGeneratedSchemas$ -update .

var all = sync.OnceValue(func() []*Tool {
	list := constructors()
	for _, t := range list {
		if e := findEncoded(t.Name); e != nil {
			t.compactInput, t.compactOutput = e.in, e.out
		} else { // not generated yet: encode them now, as go generate would
			t.compactInput, t.compactOutput = t.encodeInputSchema(), t.compactOutputSchema()
		}
	}
	return list
})

// encodedSchemas are one tool's schemas in schemas_gen.go.
type encodedSchemas struct {
	name    string
	in, out json.RawMessage
}

// findEncoded returns the generated schemas of the tool called name, or nil.
func findEncoded(name string) *encodedSchemas {
	for i := range encoded {
		if encoded[i].name == name {
			return &encoded[i]
		}
	}
	return nil
}

// constructors builds the tools, in tools/list order, without their
// encoded schemas.
func constructors() []*Tool {
	return []*Tool{
		statusTool(), doctorTool(), scanTool(), pendingTool(), diagnoseTool(),
		reloadControlTool(), buildTool(), verifyTool(), verifyBatchTool(),
		safeBuildTool(),
	}
}

// Names lists the tools' names in tools/list order.
func Names() []string {
	list := all()
	names := make([]string, len(list))
	for i, t := range list {
		names[i] = t.Name
	}
	return names
}

// findTool returns the tool called name from list, or nil.
func findTool(list []*Tool, name string) *Tool {
	for _, t := range list {
		if t.Name == name {
			return t
		}
	}
	return nil
}

// OutputSchema returns the output schema (JSON Schema 2020-12,
// docs/mcp-server.md#4.11) of one of the tools, compact, as tools/list
// advertises it from 2025-06-18 on.
func OutputSchema(tool string) (json.RawMessage, bool) {
	t := findTool(all(), tool)
	if t == nil {
		return nil, false
	}
	return slices.Clone(t.compactOutput), true
}

// compactOutputSchema is the output schema as one compact JSON object. An
// invalid schema is a build defect, caught by the toolsnaps.
func (t *Tool) compactOutputSchema() json.RawMessage {
	var compact bytes.Buffer
	if err := json.Compact(&compact, []byte(t.outputSchema)); err != nil {
		panic(fmt.Sprintf("output schema of %s: %v", t.Name, err))
	}
	return compact.Bytes()
}

// Definition is the tool as tools/list sends it, in go-sdk's type: both
// schemas as the encoded bytes of [All], which every caller shares: read
// them, never change them.
func (t *Tool) Definition() *sdkmcp.Tool {
	in, out := t.compactInput, t.compactOutput
	if in == nil { // a Tool not from All
		in, out = t.encodeInputSchema(), t.compactOutputSchema()
	}
	return &sdkmcp.Tool{
		Name:         t.Name,
		Description:  t.description,
		InputSchema:  in,
		OutputSchema: out,
		Annotations:  t.annotations,
	}
}

// encodeInputSchema builds and encodes the tool's input schema; failing is
// a build defect, caught by the toolsnaps.
func (t *Tool) encodeInputSchema() json.RawMessage {
	in, err := json.Marshal(t.inputSchema())
	if err != nil {
		panic(fmt.Sprintf("input schema of %s: %v", t.Name, err))
	}
	return in
}

// Definitions returns the definitions of [All], in order.
func Definitions() []*sdkmcp.Tool {
	var defs []*sdkmcp.Tool
	for _, t := range all() {
		defs = append(defs, t.Definition())
	}
	return defs
}

// readOnly are the annotations of a tool that only observes:
// {"readOnlyHint":true,"openWorldHint":false}.
func readOnly() *sdkmcp.ToolAnnotations {
	return &sdkmcp.ToolAnnotations{ReadOnlyHint: true, OpenWorldHint: ptr(false)}
}

// mutating are the annotations of a tool that changes the agent's state:
// {"readOnlyHint":false,"openWorldHint":true,"destructiveHint":true,"idempotentHint":false}.
func mutating() *sdkmcp.ToolAnnotations {
	return &sdkmcp.ToolAnnotations{ReadOnlyHint: false, OpenWorldHint: ptr(true), DestructiveHint: ptr(true), IdempotentHint: false}
}

func ptr[T any](v T) *T { return &v }

// noPositional is the CLI form's Args of a tool without arguments of its own.
func noPositional(pos []string, _ map[string]string) (map[string]any, error) {
	if len(pos) != 0 {
		return nil, fmt.Errorf("unexpected argument %q", pos[0])
	}
	return map[string]any{}, nil
}
