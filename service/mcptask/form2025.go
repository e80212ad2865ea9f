package mcptask

import (
	"cmp"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdkmcp "github.com/modelcontextprotocol/go-sdk/mcp"
)

// The 2025-11-25 form of tasks (SEP-1686, docs/decisions.md#D17): a session
// that negotiated 2025-11-25 through initialize asks for a task with the
// task param of tools/call and reaches it with tasks/get, tasks/result,
// tasks/list and tasks/cancel. Its tasks live in the same Store as the
// extension's; each belongs to the session (or client) that created it and
// is reachable through this form from there only.

// The methods only the 2025-11-25 form has.
const (
	MethodResult = "tasks/result"
	MethodList   = "tasks/list"
)

// MetaKeyRelatedTask names the task a tasks/result answer belongs to.
const MetaKeyRelatedTask = "io.modelcontextprotocol/related-task"

// MetaKeyTaskParam carries a tools/call's task param from a front to
// [Extension.ToolCalls] inside the forwarded params' _meta: go-sdk's
// CallToolParamsRaw has no field for it. A front puts it there only for a
// request of a session (a 2026-07-28 request's _meta is the client's own).
const MetaKeyTaskParam = "buildguard.dev/task"

// ListPageSize is the most tasks one tasks/list answer holds; more follow
// behind its nextCursor.
const ListPageSize = 100

// ResultWait bounds one tasks/result's wait for a task still working; the
// client then asks again (the build's own time limit ends it anyway).
const ResultWait = time.Hour

// Error messages of the 2025-11-25 form.
const (
	msgTaskParam      = "Invalid params: task must be an object whose ttl, when present, is a number"
	msgCursor         = "Invalid params: cursor is not one this server gave"
	msgCancelTerminal = "Invalid params: cannot cancel a task in terminal status "
	msgNotTaskTool    = "Method not found: tools/call of %s does not run as a task (its execution.taskSupport is forbidden)"
	msgTaskRequired   = "Method not found: tools/call of %s runs only as a task (its execution.taskSupport is required)"
	codeStillWorking  = -32000
)

// Task2025 is the task shape of SEP-1686.
type Task2025 struct {
	TaskID        string `json:"taskId"`
	Status        Status `json:"status"`
	StatusMessage string `json:"statusMessage,omitempty"`
	CreatedAt     string `json:"createdAt"`
	LastUpdatedAt string `json:"lastUpdatedAt"`
	TTL           *int64 `json:"ttl"`
	PollInterval  int64  `json:"pollInterval,omitempty"`
}

// CreateTaskResult2025 answers a tools/call that became a task.
type CreateTaskResult2025 struct {
	sdkmcp.ResultBase
	Task Task2025 `json:"task"`
}

// TaskResult2025 answers tasks/get and tasks/cancel: the task, flat.
type TaskResult2025 struct {
	sdkmcp.ResultBase
	Task2025
}

// ListResult2025 answers tasks/list.
type ListResult2025 struct {
	sdkmcp.ResultBase
	Tasks      []Task2025 `json:"tasks"`
	NextCursor string     `json:"nextCursor,omitempty"`
}

// Params2025 are the params of tasks/result and tasks/list, kept raw so a
// wrong type is this form's -32602 and never go-sdk's decoding error.
type Params2025 struct {
	sdkmcp.ParamsBase
	TaskID json.RawMessage `json:"taskId,omitempty"`
	Cursor json.RawMessage `json:"cursor,omitempty"`
}

// payload is the answer to tasks/result: the tool's own result with the
// related-task _meta added.
type payload struct {
	sdkmcp.ResultBase
	raw json.RawMessage
}

func (p *payload) MarshalJSON() ([]byte, error) { return p.raw, nil }

// Capability2025 is the tasks capability of a 2025-11-25 initialize: list,
// cancel and task-augmented tools/call.
func Capability2025() map[string]any {
	return map[string]any{"list": map[string]any{}, "cancel": map[string]any{}, "requests": map[string]any{"tools": map[string]any{"call": map[string]any{}}}}
}

// SessionOf reports whether req belongs to a session that negotiated
// 2025-11-25, and the owner its tasks belong to (comparable, never nil).
type SessionOf func(req sdkmcp.Request) (owner any, ok bool)

// view2025Locked is the task as SEP-1686 sees it: a cancellation asked for
// is cancelled at once and stays so, and a tool result with isError is
// failed.
func (s *Store) view2025Locked(t *task) Task2025 {
	snap := s.snapshotLocked(t)
	status := t.status
	switch {
	case t.cancelAsked:
		status = StatusCancelled
	case status == StatusCompleted && t.isError:
		status = StatusFailed
	}
	return Task2025{TaskID: snap.TaskID, Status: status, StatusMessage: snap.StatusMessage, CreatedAt: snap.CreatedAt,
		LastUpdatedAt: snap.LastUpdatedAt, TTL: snap.TTLMs, PollInterval: snap.PollIntervalMs}
}

// ownedLocked is the task id when owner created it through the 2025-11-25
// form, else ErrUnknownTask.
func (s *Store) ownedLocked(owner any, id string) (*task, error) {
	s.sweepLocked()
	t, ok := s.tasks[id]
	if !ok || t.owner == nil || t.owner != owner {
		return nil, ErrUnknownTask
	}
	return t, nil
}

// Start2025 is Start for a task of owner (comparable, not nil), reached
// through the 2025-11-25 form; it returns the task as that form sees it.
func (s *Store) Start2025(message string, owner any, work Work) (Task2025, error) {
	seed, err := s.start(message, owner, work)
	if err != nil {
		return Task2025{}, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	t, ok := s.tasks[seed.TaskID]
	if !ok {
		// Gone already: its work ended at once and a full store evicted it.
		return Task2025{}, ErrUnknownTask
	}
	return s.view2025Locked(t), nil
}

// Get2025 is the task as owner's tasks/get sees it.
func (s *Store) Get2025(owner any, id string) (Task2025, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	t, err := s.ownedLocked(owner, id)
	if err != nil {
		return Task2025{}, err
	}
	return s.view2025Locked(t), nil
}

// ErrTerminal: tasks/cancel of a task already completed, failed or
// cancelled (SEP-1686: -32602).
var ErrTerminal = errors.New("the task has already ended")

// Cancel2025 is owner's tasks/cancel: the task reads cancelled from now on
// and its work is asked to stop, as [Store.Cancel] asks it.
func (s *Store) Cancel2025(owner any, id string) (Task2025, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	t, err := s.ownedLocked(owner, id)
	if err != nil {
		return Task2025{}, err
	}
	if v := s.view2025Locked(t); v.Status.Terminal() {
		return v, fmt.Errorf("%w: %s", ErrTerminal, v.Status)
	}
	t.cancelAsked = true
	t.updated = s.now()
	t.cancel()
	return s.view2025Locked(t), nil
}

// Result2025 waits until the work of owner's task id returned, ctx ends or
// wait passes, and returns what the tools/call would have returned: its
// result, or its JSON-RPC error. A cancelled task's result is the tool's
// answer to the cancellation, or a tool error naming it.
func (s *Store) Result2025(ctx context.Context, owner any, id string, wait time.Duration) (json.RawMessage, error) {
	s.mu.Lock()
	t, err := s.ownedLocked(owner, id)
	s.mu.Unlock()
	if err != nil {
		return nil, err
	}
	timer := time.NewTimer(wait)
	defer timer.Stop()
	select {
	case <-t.done:
	case <-ctx.Done():
		return nil, ctx.Err()
	case <-timer.C:
		return nil, &jsonrpc.Error{Code: codeStillWorking, Message: fmt.Sprintf(
			"the task is still working after %s; call tasks/result again, or poll tasks/get", wait)}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	switch {
	case t.result != nil:
		return t.result, nil
	case t.err != nil:
		return nil, &jsonrpc.Error{Code: t.err.Code, Message: t.err.Message, Data: t.err.Data}
	default:
		return json.Marshal(map[string]any{"content": []any{map[string]any{"type": "text", "text": t.message}}, "isError": true})
	}
}

// List2025 is one page of owner's tasks, oldest first, after the cursor
// (empty: from the first), and the cursor of the next page ("" after the
// last).
func (s *Store) List2025(owner any, cursor string) ([]Task2025, string, error) {
	after, err := s.decodeCursor(cursor)
	if err != nil {
		return nil, "", err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.sweepLocked()
	var mine []*task
	for _, t := range s.tasks {
		if t.owner != nil && t.owner == owner && (cursor == "" || after.before(t)) {
			mine = append(mine, t)
		}
	}
	slices.SortFunc(mine, func(a, b *task) int {
		return cmp.Or(a.created.Compare(b.created), strings.Compare(a.id, b.id))
	})
	next := ""
	if len(mine) > ListPageSize {
		mine = mine[:ListPageSize]
		last := mine[len(mine)-1]
		next = s.encodeCursor(last)
	}
	out := make([]Task2025, 0, len(mine))
	for _, t := range mine {
		out = append(out, s.view2025Locked(t))
	}
	return out, next, nil
}

// position is where a tasks/list page ended: the last task's creation
// time and id.
type position struct {
	created int64
	id      string
}

func (p position) before(t *task) bool {
	c := t.created.UnixNano()
	return c > p.created || (c == p.created && t.id > p.id)
}

// errCursor: a cursor this server never gave.
var errCursor = errors.New("bad cursor")

// encodeCursor is the cursor of a page that ended at t: its position,
// base64url, a dot, and the position's HMAC-SHA256 under the store's key
// (16 bytes, base64url).
func (s *Store) encodeCursor(t *task) string {
	pos := []byte(strconv.FormatInt(t.created.UnixNano(), 10) + "." + t.id)
	return base64.RawURLEncoding.EncodeToString(pos) + "." + base64.RawURLEncoding.EncodeToString(s.cursorMAC(pos))
}

func (s *Store) cursorMAC(pos []byte) []byte {
	m := hmac.New(sha256.New, s.cursorKey[:])
	m.Write(pos)
	return m.Sum(nil)[:16]
}

// decodeCursor is the position of a cursor encodeCursor gave; errCursor
// for any other.
func (s *Store) decodeCursor(c string) (position, error) {
	if c == "" {
		return position{}, nil
	}
	p, m, ok := strings.Cut(c, ".")
	pos, errP := base64.RawURLEncoding.DecodeString(p)
	mac, errM := base64.RawURLEncoding.DecodeString(m)
	if !ok || errP != nil || errM != nil || !hmac.Equal(mac, s.cursorMAC(pos)) {
		return position{}, errCursor
	}
	n, id, ok := strings.Cut(string(pos), ".")
	created, err := strconv.ParseInt(n, 10, 64)
	if !ok || err != nil || id == "" {
		return position{}, errCursor
	}
	return position{created: created, id: id}, nil
}

// taskParam is the task param a front carried in _meta, and whether there
// is one. A task param that is not an object, or whose ttl is not a number,
// is -32602.
func taskParam(p *sdkmcp.CallToolParamsRaw) (bool, error) {
	v, present := p.Meta[MetaKeyTaskParam]
	if !present {
		return false, nil
	}
	m, isObject := v.(map[string]any)
	if !isObject {
		return true, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: msgTaskParam}
	}
	if ttl, has := m["ttl"]; has {
		if _, isNumber := ttl.(float64); !isNumber {
			return true, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: msgTaskParam}
		}
	}
	return true, nil
}

// methodNotFound is the -32601 the fronts give a method they do not serve,
// with their message.
func methodNotFound(method string) error { return &notFoundError{method: method} }

// notFoundError is a -32601 whose message go-sdk keeps: it replaces the
// message of any error that is a -32601 jsonrpc.Error (errors.Is) with its
// own "method not found", and keeps the message of an error that only
// converts to one (errors.As).
type notFoundError struct{ method string }

func (e *notFoundError) Error() string { return "Method not found: " + e.method }

// As makes e a jsonrpc.Error: code -32601, e's message.
func (e *notFoundError) As(target any) bool {
	p, ok := target.(**jsonrpc.Error)
	if ok {
		*p = &jsonrpc.Error{Code: jsonrpc.CodeMethodNotFound, Message: e.Error()}
	}
	return ok
}

// serve2025 answers the tasks methods of a 2025-11-25 session.
func (e *Extension) serve2025(ctx context.Context, owner any, method string, req sdkmcp.Request) (sdkmcp.Result, error) {
	if method == MethodUpdate {
		return nil, methodNotFound(method) // not in this revision
	}
	var id, cursor json.RawMessage
	switch p := req.GetParams().(type) {
	case *GetParams:
		if p != nil && p.TaskID != nil {
			id, _ = json.Marshal(*p.TaskID)
		}
	case *Params2025:
		if p != nil {
			id, cursor = p.TaskID, p.Cursor
		}
	}
	if method == MethodList {
		return e.list2025(owner, cursor)
	}
	var taskID string
	if id != nil && json.Unmarshal(id, &taskID) != nil || taskID == "" {
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: msgTaskIDRequired}
	}
	switch method {
	case MethodGet:
		t, err := e.Store.Get2025(owner, taskID)
		if err != nil {
			return nil, storeError(err)
		}
		return &TaskResult2025{Task2025: t}, nil
	case MethodCancel:
		t, err := e.Store.Cancel2025(owner, taskID)
		if errors.Is(err, ErrTerminal) {
			return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: msgCancelTerminal + string(t.Status)}
		}
		if err != nil {
			return nil, storeError(err)
		}
		return &TaskResult2025{Task2025: t}, nil
	default: // MethodResult
		return e.result2025(ctx, owner, taskID)
	}
}

func (e *Extension) list2025(owner any, raw json.RawMessage) (sdkmcp.Result, error) {
	var cursor string
	if raw != nil && json.Unmarshal(raw, &cursor) != nil {
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: msgCursor}
	}
	tasks, next, err := e.Store.List2025(owner, cursor)
	if err != nil {
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: msgCursor}
	}
	return &ListResult2025{Tasks: tasks, NextCursor: next}, nil
}

func (e *Extension) result2025(ctx context.Context, owner any, id string) (sdkmcp.Result, error) {
	res, err := e.Store.Result2025(ctx, owner, id, ResultWait)
	if err != nil {
		return nil, storeError(err)
	}
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(res, &fields); err != nil || fields == nil {
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: "Internal error"}
	}
	meta := map[string]json.RawMessage{}
	if m, ok := fields["_meta"]; ok {
		_ = json.Unmarshal(m, &meta)
	}
	related, _ := json.Marshal(map[string]string{"taskId": id})
	meta[MetaKeyRelatedTask] = related
	fields["_meta"], _ = json.Marshal(meta)
	out, err := json.Marshal(fields)
	if err != nil {
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: "Internal error"}
	}
	return &payload{raw: out}, nil
}
