package tools

import (
	"encoding/json"
)

// The tool names, in tools/list order (docs/mcp-server.md#4.1).
const (
	Status        = "reclazz_status"
	Doctor        = "reclazz_doctor"
	Scan          = "reclazz_scan"
	Pending       = "reclazz_pending"
	Diagnose      = "reclazz_diagnose"
	ReloadControl = "reclazz_reload_control"
	Build         = "reclazz_build"
	Verify        = "reclazz_verify"
	VerifyBatch   = "reclazz_verify_batch"
)

// Names lists the nine tools in tools/list order.
var Names = []string{Status, Doctor, Scan, Pending, Diagnose, ReloadControl, Build, Verify, VerifyBatch}

// Result is what one tool call produced: the structured object (the MCP
// structuredContent, and what the CLI prints), whether it is a tool error,
// and the text a legacy (pre-2025-06-18) session shows instead of the JSON.
type Result struct {
	// Data is the result object, already encoded as one compact JSON object.
	Data json.RawMessage
	// IsError is the tool's isError flag.
	IsError bool
	// LegacyText is the content text for sessions below 2025-06-18.
	LegacyText string
}

// ArgError is an invalid call: the cases MCP answers with -32602 and the CLI
// with exit 2. Nothing connected to an agent.
type ArgError struct {
	// Message is the error text, e.g. "timeoutMs must be an integer string between 1 and 60000".
	Message string
	// Protocol marks errors in the request itself rather than in the tool's
	// arguments (unknown tool, name not a string, arguments not an object).
	// They stay JSON-RPC -32602 in every protocol version, while argument errors
	// become isError tool results in 2025-11-25 sessions (docs/decisions.md#D5).
	Protocol bool
}

func (e *ArgError) Error() string { return e.Message }
