package mcptask

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
)

// Defaults of [Config].
const (
	DefaultKeep         = 30 * time.Minute
	MinKeep             = 10 * time.Minute
	DefaultPollInterval = 500 * time.Millisecond
	DefaultMaxTasks     = 256
)

// idBytes is the number of random bytes of a task id (192 bits).
const idBytes = 24

// Errors of the store. The method handlers turn them into JSON-RPC errors.
var (
	// ErrUnknownTask: no task has this id (never had, expired or evicted).
	ErrUnknownTask = errors.New("unknown task")
	// ErrFull: the store holds MaxTasks tasks and none of them has finished.
	ErrFull = errors.New("too many tasks are running")
	// ErrClosed: the store was closed; it starts no more tasks.
	ErrClosed = errors.New("the task store is closed")
)

// Status is a task's status (SEP-2663).
type Status string

// The statuses of SEP-2663. The last three are terminal.
const (
	StatusWorking       Status = "working"
	StatusInputRequired Status = "input_required"
	StatusCompleted     Status = "completed"
	StatusFailed        Status = "failed"
	StatusCancelled     Status = "cancelled"
)

// Terminal reports whether s never changes again.
func (s Status) Terminal() bool {
	return s == StatusCompleted || s == StatusFailed || s == StatusCancelled
}

// Work is what a task runs. It returns the result the request would have
// returned synchronously (the task becomes completed), a *jsonrpc.Error (the
// task becomes failed with it; any other error is failed with -32603), or,
// once ctx was cancelled by tasks/cancel or Close, an error wrapping
// context.Canceled (the task becomes cancelled, with the error's text as its
// status message when it came from [Cancelled]). A result returned after a
// cancellation still completes the task: the work finished first.
type Work func(ctx context.Context, r *Run) (json.RawMessage, error)

// Cancelled is the error a Work returns when it honoured a cancellation;
// message becomes the cancelled task's statusMessage (what was stopped and
// how).
func Cancelled(message string) error { return &cancelledError{msg: message} }

// CancelledWith is Cancelled with the result the work's request gave when
// it honoured the cancellation; the 2025-11-25 form returns it from
// tasks/result (docs/decisions.md#D17).
func CancelledWith(message string, result json.RawMessage) error {
	return &cancelledError{msg: message, result: result}
}

type cancelledError struct {
	msg    string
	result json.RawMessage
}

func (e *cancelledError) Error() string { return e.msg }
func (e *cancelledError) Unwrap() error { return context.Canceled }

// Config configures a Store. The zero value is usable.
type Config struct {
	// Keep is how long a finished task stays retrievable after it finished
	// (its ttlMs counts from its creation, so it grows by the time the work
	// ran). Zero means DefaultKeep; values under MinKeep are raised to it.
	Keep time.Duration
	// PollInterval is the pollIntervalMs every task suggests. Zero means
	// DefaultPollInterval.
	PollInterval time.Duration
	// MaxTasks bounds the tasks held, running and finished. Zero means
	// DefaultMaxTasks.
	MaxTasks int
	// Now is the clock. Nil means time.Now.
	Now func() time.Time
	// Rand is the source of task ids. Nil means crypto/rand.
	Rand io.Reader
}

// Store holds tasks and runs their work. Its methods are safe for
// concurrent use.
type Store struct {
	keep, poll time.Duration
	max        int
	now        func() time.Time
	rand       io.Reader
	base       context.Context
	stop       context.CancelFunc
	// cursorKey signs the tasks/list cursors this store gives, so that one
	// it never gave is refused (docs/decisions.md#D17.1).
	cursorKey [32]byte

	mu     sync.Mutex
	tasks  map[string]*task
	closed bool
	wg     sync.WaitGroup
}

// task is one task's state, guarded by the store's mutex.
type task struct {
	id          string
	created     time.Time
	updated     time.Time
	finished    time.Time // zero while running
	status      Status
	message     string
	result      json.RawMessage
	isError     bool // the result is a tools/call result with isError true
	err         *wireError
	owner       any // who may reach it through the 2025-11-25 form; nil: nobody
	cancel      context.CancelFunc
	cancelAsked bool
	inputs      map[string]json.RawMessage // outstanding input requests (input_required)
	answers     map[string]json.RawMessage // answers received for them
	answered    chan struct{}              // closed when every outstanding request has an answer
	done        chan struct{}              // closed when the work returned
}

// NewStore returns an empty store.
func NewStore(cfg Config) *Store {
	s := &Store{keep: cfg.Keep, poll: cfg.PollInterval, max: cfg.MaxTasks, now: cfg.Now, rand: cfg.Rand, tasks: map[string]*task{}}
	if s.keep == 0 {
		s.keep = DefaultKeep
	}
	if s.keep < MinKeep {
		s.keep = MinKeep
	}
	if s.poll <= 0 {
		s.poll = DefaultPollInterval
	}
	if s.max <= 0 {
		s.max = DefaultMaxTasks
	}
	if s.now == nil {
		s.now = time.Now
	}
	if s.rand == nil {
		s.rand = rand.Reader
	}
	_, _ = rand.Read(s.cursorKey[:]) // crypto/rand's Read never fails
	s.base, s.stop = context.WithCancel(context.Background())
	return s
}

// Start creates a task, starts work on it and returns the task's seed state,
// with message as its statusMessage. The task is retrievable before Start
// returns. The work's context is the store's, not the caller's: it ends only
// with tasks/cancel or Close.
func (s *Store) Start(message string, work Work) (Task, error) {
	return s.start(message, nil, work)
}

// start is Start for a task that owner reaches through the 2025-11-25 form
// (nil: a 2026-07-28 task, reached by its id alone).
func (s *Store) start(message string, owner any, work Work) (Task, error) {
	id, err := s.newID()
	if err != nil {
		return Task{}, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return Task{}, ErrClosed
	}
	s.sweepLocked()
	if len(s.tasks) >= s.max && !s.evictLocked() {
		return Task{}, ErrFull
	}
	ctx, cancel := context.WithCancel(s.base)
	now := s.now()
	t := &task{id: id, created: now, updated: now, status: StatusWorking, message: message, cancel: cancel, done: make(chan struct{}), owner: owner}
	s.tasks[id] = t
	s.wg.Add(1)
	go s.run(ctx, t, work)
	return s.snapshotLocked(t), nil
}

func (s *Store) newID() (string, error) {
	b := make([]byte, idBytes)
	if _, err := io.ReadFull(s.rand, b); err != nil {
		return "", fmt.Errorf("making a task id: %w", err)
	}
	return base64.RawURLEncoding.EncodeToString(b), nil
}

// run runs work and records how it ended. A panic in the work fails the
// task with -32603 instead of ending the process.
func (s *Store) run(ctx context.Context, t *task, work Work) {
	defer s.wg.Done()
	defer close(t.done)
	var res json.RawMessage
	var err error
	func() {
		defer func() {
			if r := recover(); r != nil {
				res, err = nil, fmt.Errorf("panic in task work: %v", r)
			}
		}()
		res, err = work(ctx, &Run{s: s, t: t, ctx: ctx})
	}()
	s.mu.Lock()
	defer s.mu.Unlock()
	t.cancel()
	now := s.now()
	t.updated, t.finished = now, now
	t.inputs, t.answers = nil, nil
	var rpcErr *jsonrpc.Error
	var cancelled *cancelledError
	switch {
	case err == nil && res != nil:
		t.status, t.result, t.message = StatusCompleted, res, ""
		_, t.isError = toolError(res)
	case err != nil && errors.Is(err, context.Canceled) && t.cancelAsked:
		t.status, t.message = StatusCancelled, "cancelled"
		if errors.As(err, &cancelled) {
			t.message, t.result = cancelled.msg, cancelled.result
		}
	case errors.As(err, &rpcErr):
		t.status, t.message = StatusFailed, rpcErr.Message
		t.err = &wireError{Code: rpcErr.Code, Message: rpcErr.Message, Data: rpcErr.Data}
	default:
		if err == nil {
			err = errors.New("the work returned neither a result nor an error")
		}
		// A Go error is a broken invariant: -32603, its text only in the
		// status message.
		t.status, t.message = StatusFailed, err.Error()
		t.err = &wireError{Code: jsonrpc.CodeInternalError, Message: "Internal error"}
	}
}

// Get returns the task's current state, with its result, error or
// outstanding input requests.
func (s *Store) Get(id string) (DetailedTask, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.sweepLocked()
	t, ok := s.tasks[id]
	if !ok {
		return DetailedTask{}, ErrUnknownTask
	}
	d := DetailedTask{Task: s.snapshotLocked(t)}
	switch t.status {
	case StatusCompleted:
		d.Result = t.result
	case StatusFailed:
		d.Error = t.err
	case StatusInputRequired:
		d.InputRequests = map[string]json.RawMessage{}
		for k, v := range t.inputs {
			if _, done := t.answers[k]; !done {
				d.InputRequests[k] = v
			}
		}
	}
	return d, nil
}

// Answer is the answer to a tasks/get of the task id: its current state,
// or the SEP's -32602 for an id the store does not hold (it never existed,
// or it expired). The extension's custom method gives it through go-sdk, and
// the HTTP front gives it directly (docs/http.md#4.1); the two are the same.
func (s *Store) Answer(id string) (*GetResult, error) {
	d, err := s.Get(id)
	if err != nil {
		return nil, storeError(err)
	}
	return &GetResult{ResultType: ResultTypeComplete, DetailedTask: d}, nil
}

// Cancel asks the task's work to stop. It is idempotent: a second call, or a
// call for a finished task, changes nothing and is no error. The task
// becomes cancelled once its work returned (cancellation is cooperative).
func (s *Store) Cancel(id string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.sweepLocked()
	t, ok := s.tasks[id]
	if !ok {
		return ErrUnknownTask
	}
	if t.status.Terminal() || t.cancelAsked {
		return nil
	}
	t.cancelAsked = true
	t.updated = s.now()
	t.cancel()
	return nil
}

// Update delivers answers to the task's outstanding input requests. Answers
// to keys that are not outstanding are ignored (SEP-2663).
func (s *Store) Update(id string, responses map[string]json.RawMessage) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.sweepLocked()
	t, ok := s.tasks[id]
	if !ok {
		return ErrUnknownTask
	}
	if t.status != StatusInputRequired {
		return nil
	}
	for k, v := range responses {
		if _, want := t.inputs[k]; want {
			if _, dup := t.answers[k]; !dup {
				t.answers[k] = v
			}
		}
	}
	if len(t.answers) == len(t.inputs) && t.answered != nil {
		close(t.answered)
		t.answered = nil
		t.status = StatusWorking
		t.updated = s.now()
	}
	return nil
}

// Len is the number of tasks held.
func (s *Store) Len() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.sweepLocked()
	return len(s.tasks)
}

// Close starts no more tasks, cancels every running one and waits until its
// work returned or ctx ends. Finished tasks stay retrievable.
func (s *Store) Close(ctx context.Context) error {
	s.mu.Lock()
	s.closed = true
	for _, t := range s.tasks {
		if !t.status.Terminal() {
			t.cancelAsked = true
		}
	}
	s.mu.Unlock()
	s.stop()
	done := make(chan struct{})
	go func() { s.wg.Wait(); close(done) }()
	select {
	case <-done:
		return nil
	case <-ctx.Done():
		return fmt.Errorf("waiting for running tasks: %w", ctx.Err())
	}
}

// Wait blocks until the task's work returned or ctx ends.
func (s *Store) Wait(ctx context.Context, id string) error {
	s.mu.Lock()
	t, ok := s.tasks[id]
	s.mu.Unlock()
	if !ok {
		return ErrUnknownTask
	}
	select {
	case <-t.done:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// sweepLocked drops finished tasks whose time is up.
func (s *Store) sweepLocked() {
	now := s.now()
	for id, t := range s.tasks {
		if !t.finished.IsZero() && now.Sub(t.finished) > s.keep {
			delete(s.tasks, id)
		}
	}
}

// evictLocked drops the finished task that finished first; false when every
// task still runs.
func (s *Store) evictLocked() bool {
	var finished []*task
	for _, t := range s.tasks {
		if !t.finished.IsZero() {
			finished = append(finished, t)
		}
	}
	if len(finished) == 0 {
		return false
	}
	oldest := slices.MinFunc(finished, func(a, b *task) int { return a.finished.Compare(b.finished) })
	delete(s.tasks, oldest.id)
	return true
}

func (s *Store) snapshotLocked(t *task) Task {
	end := t.finished
	if end.IsZero() {
		end = s.now()
	}
	ttl := end.Sub(t.created).Milliseconds() + s.keep.Milliseconds()
	status, msg := t.status, t.message
	if t.cancelAsked && !status.Terminal() {
		msg = "cancelling: " + msg
		if t.message == "" {
			msg = "cancelling"
		}
	}
	return Task{
		TaskID:         t.id,
		Status:         status,
		StatusMessage:  msg,
		CreatedAt:      timestamp(t.created),
		LastUpdatedAt:  timestamp(t.updated),
		TTLMs:          &ttl,
		PollIntervalMs: s.poll.Milliseconds(),
	}
}

func timestamp(t time.Time) string { return t.UTC().Format("2006-01-02T15:04:05.000Z") }

// Run is a task's handle for its work.
type Run struct {
	s   *Store
	t   *task
	ctx context.Context
}

// ID is the task's id.
func (r *Run) ID() string { return r.t.id }

// Report sets the task's statusMessage (the latest progress line, a queue
// position). It does nothing once the task finished.
func (r *Run) Report(message string) {
	r.s.mu.Lock()
	defer r.s.mu.Unlock()
	if r.t.status.Terminal() || r.t.message == message {
		return
	}
	r.t.message = message
	r.t.updated = r.s.now()
}

// Input parks the task in input_required with these requests (key → the
// server-to-client request, e.g. an elicitation/create) and returns the
// client's answers once tasks/update delivered one for every key, or the
// context's error when the task is cancelled first. Keys must be unique
// over the task's life.
func (r *Run) Input(requests map[string]json.RawMessage) (map[string]json.RawMessage, error) {
	if len(requests) == 0 {
		return map[string]json.RawMessage{}, nil
	}
	r.s.mu.Lock()
	ch := make(chan struct{})
	r.t.inputs, r.t.answers, r.t.answered = requests, map[string]json.RawMessage{}, ch
	r.t.status, r.t.updated = StatusInputRequired, r.s.now()
	r.s.mu.Unlock()
	select {
	case <-ch:
		r.s.mu.Lock()
		defer r.s.mu.Unlock()
		answers := r.t.answers
		r.t.inputs, r.t.answers = nil, nil
		return answers, nil
	case <-r.ctx.Done():
		r.s.mu.Lock()
		defer r.s.mu.Unlock()
		if r.t.status == StatusInputRequired {
			r.t.status = StatusWorking
		}
		r.t.inputs, r.t.answers, r.t.answered = nil, nil, nil
		return nil, r.ctx.Err()
	}
}
