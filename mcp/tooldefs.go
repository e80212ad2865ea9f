package mcp

import (
	sdkmcp "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/buildguard/buildguard/tools"
)

// The default timeouts of docs/decisions.md#D7, in milliseconds.
const (
	sessionTimeoutMs = 5000 // build, verify, verify_batch, doctor, reload_control
	simpleTimeoutMs  = 2000 // status, scan, pending, diagnose
)

// Patterns and limits shared by input and output schemas.
const (
	ownerPattern    = "^[A-Za-z0-9_-]{1,64}$"
	sha256Pattern   = "^[0-9a-f]{64}$"
	maxClassNameLen = 256
)

// toolDefinitions returns the nine tools in tools/list order (docs/mcp-server.md#4.1).
func toolDefinitions() []*sdkmcp.Tool {
	return []*sdkmcp.Tool{
		statusTool(), doctorTool(), scanTool(), pendingTool(), diagnoseTool(),
		reloadControlTool(), buildTool(), verifyTool(), verifyBatchTool(),
	}
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

func statusTool() *sdkmcp.Tool {
	return &sdkmcp.Tool{
		Name:         tools.Status,
		Description:  "Report whether the Reclazz agent is attached and its health, as JSON. Never a tool error: an unreachable agent is attached:false with a reason.",
		InputSchema:  inputSchema(timeoutDescription(simpleTimeoutMs), nil),
		OutputSchema: outputSchema(tools.Status),
		Annotations:  readOnly(),
	}
}

func doctorTool() *sdkmcp.Tool {
	return &sdkmcp.Tool{
		Name:         tools.Doctor,
		Description:  "Read correlated JVM, session, watch and capability evidence from the agent. Compare pid, workingDirectory and sessionId with the application you mean before acting; the evidence does not prove coverage, the project root or any reload.",
		InputSchema:  inputSchema(timeoutDescription(sessionTimeoutMs), nil),
		OutputSchema: outputSchema(tools.Doctor),
		Annotations:  readOnly(),
	}
}

func scanTool() *sdkmcp.Tool {
	return &sdkmcp.Tool{
		Name:         tools.Scan,
		Description:  "Ask the agent for an immediate scan of its watched output. Dispatch only: it confirms neither acceptance nor reload completion, and it cannot release a failed build.",
		InputSchema:  inputSchema(timeoutDescription(simpleTimeoutMs), nil),
		OutputSchema: outputSchema(tools.Scan),
		Annotations:  mutating(),
	}
}

func pendingTool() *sdkmcp.Tool {
	return &sdkmcp.Tool{
		Name:         tools.Pending,
		Description:  "List the changes the agent could not hot-reload and that need an application restart. Silence is never reported as nothing pending.",
		InputSchema:  inputSchema(timeoutDescription(simpleTimeoutMs), nil),
		OutputSchema: outputSchema(tools.Pending),
		Annotations:  readOnly(),
	}
}

func diagnoseTool() *sdkmcp.Tool {
	return &sdkmcp.Tool{
		Name:        tools.Diagnose,
		Description: "Explain the last reload of one class. className (a binary class name such as app.Main$Inner) is required.",
		InputSchema: inputSchema(timeoutDescription(simpleTimeoutMs), obj{
			{"className", stringProp(maxClassNameLen, "Binary class name, e.g. com.example.Service$Inner.")},
		}, "className"),
		OutputSchema: outputSchema(tools.Diagnose),
		Annotations:  readOnly(),
	}
}

func reloadControlTool() *sdkmcp.Tool {
	return &sdkmcp.Tool{
		Name:        tools.ReloadControl,
		Description: "Pause, resume or inspect automatic reload admission. Pending changes are kept, resume never releases BUILD holds, an acknowledgement is not completion, and the switch is agent-wide.",
		InputSchema: inputSchema(timeoutDescription(sessionTimeoutMs), obj{
			{"action", obj{{"type", "string"}, {"maxLength", maxArgLength}, {"enum", []string{"pause", "resume", "status"}}, {"description", "pause, resume or status."}}},
		}, "action"),
		OutputSchema: outputSchema(tools.ReloadControl),
		Annotations:  mutating(),
	}
}

func buildTool() *sdkmcp.Tool {
	return &sdkmcp.Tool{
		Name:        tools.Build,
		Description: "Signal the compile state to the agent. Send started and wait for its acknowledgement before compiling; send ok only after the compiler exited 0, failed otherwise. Use one unique owner token for started, ok and failed and keep it: only that owner's successful build releases a held output, and SCAN cannot. An acknowledgement is not reload completion.",
		InputSchema: inputSchema(timeoutDescription(sessionTimeoutMs), obj{
			{"state", obj{{"type", "string"}, {"enum", []string{"started", "ok", "failed"}}, {"description", "started before compiling; ok after exit 0; failed otherwise."}}},
			{"owner", obj{{"type", "string"}, {"maxLength", 64}, {"pattern", ownerPattern}, {"description", "Owner token of this build, 1-64 ASCII letters, digits, _ or -. Keep it for recovery."}}},
		}, "state", "owner"),
		OutputSchema: outputSchema(tools.Build),
		Annotations:  mutating(),
	}
}

func verifyTool() *sdkmcp.Tool {
	return &sdkmcp.Tool{
		Name:        tools.Verify,
		Description: "Exact-byte completion check of one class: does the running JVM hold the class file with this SHA-256? Only status applied counts as success; the result is a point-in-time receipt, so poll with a deadline.",
		InputSchema: inputSchema(timeoutDescription(sessionTimeoutMs), obj{
			{"className", stringProp(maxClassNameLen, "Binary class name, e.g. com.example.Service$Inner.")},
			{"sha256", stringProp(maxArgLength, "Lower-case hex SHA-256 (64 digits) of the compiled class file.")},
		}, "className", "sha256"),
		OutputSchema: outputSchema(tools.Verify),
		Annotations:  readOnly(),
	}
}

func verifyBatchTool() *sdkmcp.Tool {
	item := obj{
		{"type", "object"},
		{"additionalProperties", false},
		{"properties", obj{
			{"className", stringProp(maxClassNameLen, "Binary class name, e.g. com.example.Service$Inner.")},
			{"sha256", obj{{"type", "string"}, {"maxLength", 64}, {"pattern", sha256Pattern}, {"description", "Lower-case hex SHA-256 (64 digits) of the compiled class file."}}},
		}},
		{"required", []string{"className", "sha256"}},
	}
	return &sdkmcp.Tool{
		Name:        tools.VerifyBatch,
		Description: "Verify 1-32 unique className/sha256 pairs in order on one connection within one total timeout. Only allApplied confirms the individual receipts, and the batch is never atomic. Cancellable through notifications/cancelled; there is no automatic retry.",
		InputSchema: inputSchema("Total budget in milliseconds for connect, handshake and every receipt, as an integer string, 1-60000. Default 5000.", obj{
			{"items", obj{{"type", "array"}, {"minItems", 1}, {"maxItems", 32}, {"items", item}}},
		}, "items"),
		OutputSchema: outputSchema(tools.VerifyBatch),
		Annotations:  readOnly(),
	}
}
