package mcptask

import (
	"context"
	"encoding/json"
	"errors"
	"reflect"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdkmcp "github.com/modelcontextprotocol/go-sdk/mcp"
)

// JSON-RPC error codes of the extension's refusals.
const (
	// CodeMissingCapability (-32021, SEP-2575): the request did not declare
	// the extension.
	CodeMissingCapability = sdkmcp.CodeMissingRequiredClientCapabilities
	// CodeHeaderMismatch (-32020, SEP-2243): the Mcp-Name header of an HTTP
	// request is not its taskId.
	CodeHeaderMismatch = sdkmcp.CodeHeaderMismatch
)

// Error messages of the extension's refusals.
const (
	msgMissingCapability = "Missing required client capability: declare the extension " + ExtensionID + " in _meta " + sdkmcp.MetaKeyClientCapabilities + ".extensions"
	msgUnknownTask       = "Invalid params: no task has this taskId (it never existed, or it expired)"
	msgTaskIDRequired    = "Invalid params: taskId must be a non-empty string"
	msgResponsesRequired = "Invalid params: inputResponses must be an object"
	msgNameHeader        = "Header mismatch: the Mcp-Name header must be the request's taskId"
)

// Extension serves a Store through go-sdk: the three methods and the gate in
// front of them.
type Extension struct {
	Store *Store
	// Session tells the requests of a session that negotiated 2025-11-25,
	// which get the tasks of SEP-1686 (form2025.go). Nil: no session does.
	Session SessionOf
}

// Advertise adds the extension to capabilities (server/discover).
func Advertise(c *sdkmcp.ServerCapabilities) {
	c.AddExtension(ExtensionID, map[string]any{})
}

// MissingCapability is the -32021 error of SEP-2575 naming the extension, for
// tasks/* from a client that did not declare it and for a tool that can only
// run as a task.
func MissingCapability() *jsonrpc.Error {
	data, _ := json.Marshal(map[string]any{"requiredCapabilities": map[string]any{"extensions": map[string]any{ExtensionID: map[string]any{}}}})
	return &jsonrpc.Error{Code: CodeMissingCapability, Message: msgMissingCapability, Data: data}
}

// Register adds tasks/get, tasks/update and tasks/cancel to srv as custom
// methods, and the 2025-11-25 form's tasks/result and tasks/list. Install
// [Extension.Middleware] too, or they answer clients that did not declare
// the extension, and every session serves tasks/result and tasks/list.
func (e *Extension) Register(srv *sdkmcp.Server) error {
	if err := sdkmcp.AddReceivingCustomMethod(srv, MethodGet, e.get); err != nil {
		return err
	}
	if err := sdkmcp.AddReceivingCustomMethod(srv, MethodUpdate, e.update); err != nil {
		return err
	}
	for _, m := range []string{MethodResult, MethodList} {
		// Only a 2025-11-25 session gets here (Middleware).
		if err := sdkmcp.AddReceivingCustomMethod(srv, m, func(ctx context.Context, _ *sdkmcp.ServerSession, _ *Params2025) (sdkmcp.Result, error) {
			return nil, methodNotFound(m)
		}); err != nil {
			return err
		}
	}
	return sdkmcp.AddReceivingCustomMethod(srv, MethodCancel, e.cancel)
}

// Middleware is receiving middleware for the tasks methods: a request of a
// 2025-11-25 session that did not declare the extension gets the
// 2025-11-25 form (form2025.go); any other request that did not declare it
// is refused with -32021 (tasks/result and tasks/list, which SEP-2663
// removed, with -32601), and over HTTP an Mcp-Name header that is not the
// taskId with -32020 (SEP-2663, Routing Headers). Other methods pass
// through.
func (e *Extension) Middleware(next sdkmcp.MethodHandler) sdkmcp.MethodHandler {
	return func(ctx context.Context, method string, req sdkmcp.Request) (sdkmcp.Result, error) {
		switch method {
		case MethodGet, MethodUpdate, MethodCancel, MethodResult, MethodList:
		default:
			return next(ctx, method, req)
		}
		declared := Declared(requestMeta(req))
		if !declared && e.Session != nil {
			if owner, ok := e.Session(req); ok {
				return e.serve2025(ctx, owner, method, req)
			}
		}
		if method == MethodResult || method == MethodList {
			return nil, methodNotFound(method)
		}
		if !declared {
			return nil, MissingCapability()
		}
		if x := req.GetExtra(); x != nil && x.Header != nil {
			id := ""
			switch p := req.GetParams().(type) {
			case *GetParams:
				if p != nil && p.TaskID != nil {
					id = *p.TaskID
				}
			case *UpdateParams:
				if p != nil && p.TaskID != nil {
					id = *p.TaskID
				}
			}
			if strings.TrimSpace(x.Header.Get("Mcp-Name")) != id {
				return nil, &jsonrpc.Error{Code: CodeHeaderMismatch, Message: msgNameHeader}
			}
		}
		return next(ctx, method, req)
	}
}

// requestMeta is req's params._meta, nil without params.
func requestMeta(req sdkmcp.Request) map[string]any {
	p := req.GetParams()
	if p == nil {
		return nil
	}
	if v := reflect.ValueOf(p); v.Kind() == reflect.Pointer && v.IsNil() {
		return nil
	}
	return p.GetMeta()
}

// RequestDeclared reports whether req declared the extension in its _meta.
func RequestDeclared(req sdkmcp.Request) bool { return Declared(requestMeta(req)) }

// ParamsProblem is the -32602 message for params of one of the
// extension's methods whose fields have a JSON type they cannot have — a
// taskId that is not a string, inputResponses of a tasks/update that is
// not an object — and "" for any other params. A front checks it before
// go-sdk decodes the params: go-sdk's own decoding error names Go types
// and echoes the params back.
func ParamsProblem(method string, fields map[string]json.RawMessage) string {
	if id, ok := fields["taskId"]; ok && !jsonKind(id, '"') {
		return msgTaskIDRequired
	}
	if r, ok := fields["inputResponses"]; ok && method == MethodUpdate && !jsonKind(r, '{') {
		return msgResponsesRequired
	}
	return ""
}

// jsonKind reports whether the JSON value v starts with c (after white
// space): '"' for a string, '{' for an object.
func jsonKind(v json.RawMessage, c byte) bool {
	for _, b := range v {
		switch b {
		case ' ', '\t', '\n', '\r':
			continue
		}
		return b == c
	}
	return false
}

func taskID(p *string) (string, error) {
	if p == nil || *p == "" {
		return "", &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: msgTaskIDRequired}
	}
	return *p, nil
}

func storeError(err error) error {
	if errors.Is(err, ErrUnknownTask) {
		return &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: msgUnknownTask}
	}
	return err
}

func (e *Extension) get(_ context.Context, _ *sdkmcp.ServerSession, p *GetParams) (*GetResult, error) {
	if p == nil {
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: msgTaskIDRequired}
	}
	id, err := taskID(p.TaskID)
	if err != nil {
		return nil, err
	}
	return e.Store.Answer(id)
}

func (e *Extension) cancel(_ context.Context, _ *sdkmcp.ServerSession, p *GetParams) (*AckResult, error) {
	if p == nil {
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: msgTaskIDRequired}
	}
	id, err := taskID(p.TaskID)
	if err != nil {
		return nil, err
	}
	if err := e.Store.Cancel(id); err != nil {
		return nil, storeError(err)
	}
	return &AckResult{ResultType: ResultTypeComplete}, nil
}

func (e *Extension) update(_ context.Context, _ *sdkmcp.ServerSession, p *UpdateParams) (*AckResult, error) {
	if p == nil {
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: msgTaskIDRequired}
	}
	id, err := taskID(p.TaskID)
	if err != nil {
		return nil, err
	}
	if p.InputResponses == nil {
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: msgResponsesRequired}
	}
	if err := e.Store.Update(id, p.InputResponses); err != nil {
		return nil, storeError(err)
	}
	return &AckResult{ResultType: ResultTypeComplete}, nil
}
