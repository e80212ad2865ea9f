package mcptask

import (
	"encoding/json"

	sdkmcp "github.com/modelcontextprotocol/go-sdk/mcp"
)

// ExtensionID names the extension in capabilities.extensions (SEP-2663).
const ExtensionID = "io.modelcontextprotocol/tasks"

// The methods of the extension.
const (
	MethodGet    = "tasks/get"
	MethodUpdate = "tasks/update"
	MethodCancel = "tasks/cancel"
)

// Result discriminators (SEP-2322, SEP-2663).
const (
	ResultTypeTask     = "task"
	ResultTypeComplete = "complete"
)

// version20260728 is the first protocol version that has per-request client
// capabilities, and so the extension (SEP-2663: it is not defined under
// 2025-11-25).
const version20260728 = "2026-07-28"

// Task is the task shape of SEP-2663: what a CreateTaskResult carries and
// what every tasks/get answer starts with.
type Task struct {
	TaskID         string `json:"taskId"`
	Status         Status `json:"status"`
	StatusMessage  string `json:"statusMessage,omitempty"`
	CreatedAt      string `json:"createdAt"`
	LastUpdatedAt  string `json:"lastUpdatedAt"`
	TTLMs          *int64 `json:"ttlMs"`
	PollIntervalMs int64  `json:"pollIntervalMs,omitempty"`
}

// DetailedTask is a Task with what its status inlines: the result of a
// completed task, the JSON-RPC error of a failed one, the outstanding
// requests of one in input_required.
type DetailedTask struct {
	Task
	Result        json.RawMessage            `json:"result,omitempty"`
	Error         *wireError                 `json:"error,omitempty"`
	InputRequests map[string]json.RawMessage `json:"inputRequests,omitempty"`
}

// ErrorCode is the code of a failed task's error (0 when it has none).
func (d DetailedTask) ErrorCode() int64 {
	if d.Error == nil {
		return 0
	}
	return d.Error.Code
}

// wireError is a JSON-RPC error object.
type wireError struct {
	Code    int64           `json:"code"`
	Message string          `json:"message"`
	Data    json.RawMessage `json:"data,omitempty"`
}

// CreateTaskResult is the answer to a request that became a task:
// resultType "task" and the task's seed state, flat.
type CreateTaskResult struct {
	sdkmcp.ResultBase
	ResultType string `json:"resultType"`
	Task
}

// NewCreateTaskResult wraps a task's seed state.
func NewCreateTaskResult(t Task) *CreateTaskResult {
	return &CreateTaskResult{ResultType: ResultTypeTask, Task: t}
}

// GetParams are the params of tasks/get and tasks/cancel.
type GetParams struct {
	sdkmcp.ParamsBase
	TaskID *string `json:"taskId"`
}

// UpdateParams are the params of tasks/update.
type UpdateParams struct {
	sdkmcp.ParamsBase
	TaskID         *string                    `json:"taskId"`
	InputResponses map[string]json.RawMessage `json:"inputResponses"`
}

// GetResult is the answer to tasks/get.
type GetResult struct {
	sdkmcp.ResultBase
	ResultType string `json:"resultType"`
	DetailedTask
}

// AckResult is the empty acknowledgement of tasks/update and tasks/cancel.
type AckResult struct {
	sdkmcp.ResultBase
	ResultType string `json:"resultType"`
}

// Declared reports whether a request's _meta declares the extension: a
// 2026-07-28 (or later) protocol version and ExtensionID, with an object,
// under the client capabilities' extensions, every key spelt exactly. A declaration in an older version's initialize
// does not count (SEP-2663, Backward Compatibility).
func Declared(meta map[string]any) bool {
	v, _ := meta[sdkmcp.MetaKeyProtocolVersion].(string)
	if v < version20260728 {
		return false
	}
	switch c := meta[sdkmcp.MetaKeyClientCapabilities].(type) {
	case map[string]any:
		// The keys are matched exactly, as JSON names are: encoding/json
		// would take "EXTENSIONS" for "extensions".
		extensions, _ := c["extensions"].(map[string]any)
		_, isObject := extensions[ExtensionID].(map[string]any)
		return isObject
	case *sdkmcp.ClientCapabilities:
		if c == nil {
			return false
		}
		_, ok := c.Extensions[ExtensionID]
		return ok
	default:
		return false
	}
}

// RouteName is the value the Mcp-Name header of a tasks request must carry
// over streamable HTTP (SEP-2663: the task id), and whether method is one of
// the extension's methods.
func RouteName(method string, params json.RawMessage) (string, bool) {
	switch method {
	case MethodGet, MethodUpdate, MethodCancel:
	default:
		return "", false
	}
	var p struct {
		TaskID string `json:"taskId"`
	}
	_ = json.Unmarshal(params, &p)
	return p.TaskID, true
}
