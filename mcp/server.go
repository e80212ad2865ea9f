package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"sync"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdkmcp "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/buildguard/buildguard/mcp/httpfront"
	"github.com/buildguard/buildguard/mcp/protocol"
	"github.com/buildguard/buildguard/mcp/stdio"
	"github.com/buildguard/buildguard/service/mcptask"
	"github.com/buildguard/buildguard/service/safebuild"
	"github.com/buildguard/buildguard/service/tools"
)

// ServerName is serverInfo.name (docs/decisions.md#D3).
const ServerName = "buildguard"

// Instructions is the initialize instructions paragraph: the one call
// first (docs/safe-build.md#11), then the safe loop for builds the model
// must run itself, both within the first 1,000 characters, the whole within
// the 2,048 a host keeps of a server's instructions (docs/hosts.md#9).
const Instructions = "buildguard guards a JVM running the Reclazz hot-reload agent against half-built class output. " +
	"To build and reload, call reclazz_safe_build: it builds the project under an owned hold, releases the new classes only after a clean exit, and verifies them; " +
	"only changedClasses.allApplied true proves the new bytes are live. Any other outcome leaves the old classes running: read diagnostics (errors first) and detail, fix, call again. " +
	"To run the build yourself, follow the safe loop: call reclazz_doctor and compare its pid, workingDirectory and sessionId with your application; " +
	"call reclazz_build state started with a unique owner token you keep and wait for its acknowledgement; compile; " +
	"then reclazz_build with the same owner, state ok only if the compiler exited 0, else failed (output held until that owner's build succeeds); " +
	"verify each changed class (reclazz_verify or reclazz_verify_batch) against the SHA-256 of the class you built (only applied counts); " +
	"finally exercise the application. An acknowledgement or a scan is never proof of a reload. " +
	"Builds of the project run one at a time, in arrival order, whoever asks (other agents' servers, the developer's terminal): while another runs, your call waits its turn and reports its place as progress instead of failing, so do not retry it; an identical call made while one still waits shares that build's result. " +
	"A long build need not hold the call open: a client that declares the MCP tasks extension (io.modelcontextprotocol/tasks) in a 2026-07-28 request's _meta, or sends a task parameter in a 2025-11-25 tools/call, gets reclazz_safe_build as a task, answered at once with a taskId; poll tasks/get until it is completed, and its result is the same answer; otherwise the call answers when the build has finished or, once its answer time (answerWithinMs, or the server's default) has passed, with outcome running and a buildId: call reclazz_safe_build again with resume set to that buildId to get the build's own result."

// Error texts of the middleware.
const (
	msgAlreadyInitialized = "Invalid Request: the session is already initialized"
	msgBatchFailed        = "Batch processing failed"
)

// Config configures a Server.
type Config struct {
	// Caller runs the tools. Nil means a tools.Service made from Tools,
	// which the server owns (Serve stops its safe builds).
	Caller Caller
	// Tools configures the tool service made when Caller is nil.
	Tools tools.Deps
	// Version is serverInfo.version. Empty means "dev".
	Version string
	// Logger receives diagnostics (never protocol). Nil means none.
	Logger hclog.Logger
	// DrainTimeout bounds the wait for a cancelled batch at EOF of a stdio
	// session. Zero means stdio.DefaultDrainTimeout.
	DrainTimeout time.Duration
}

// Server is buildguard's MCP server: a go-sdk server whose receiving
// middleware serves the ten tools, the version policy and output shaping.
type Server struct {
	caller      Caller
	service     *tools.Service // the tool service made from Config.Tools; nil with a Config.Caller
	version     string
	log         hclog.Logger
	drain       time.Duration
	sdk         *sdkmcp.Server
	info        *sdkmcp.Implementation // the identity sdk was created with
	names       []string               // the tools in tools/list order
	httpCalls   *httpfront.Calls       // the HTTP requests in flight
	listing     func() []*sdkmcp.Tool  // the tools as tools/list sends them, built at the first list
	tasks       *mcptask.Store         // the safe builds that run as tasks (docs/decisions.md#D17)
	logReads    chan struct{}          // one token per resources/read of a build log running (MaxLogReads)
	logReadWait time.Duration          // how long a resources/read waits for a turn: logReadWait

	mu       sync.Mutex
	sessions map[*sdkmcp.ServerSession]string // stdio: negotiated version; absent = before initialize
}

// NewServer builds the server.
func NewServer(cfg Config) *Server {
	s := &Server{
		caller:      cfg.Caller,
		version:     cfg.Version,
		log:         cfg.Logger,
		drain:       cfg.DrainTimeout,
		names:       tools.Names(),
		sessions:    map[*sdkmcp.ServerSession]string{},
		logReads:    make(chan struct{}, MaxLogReads),
		logReadWait: logReadWait,
	}
	if s.version == "" {
		s.version = "dev"
	}
	if s.log == nil {
		s.log = hclog.NewNullLogger()
	}
	if s.drain <= 0 {
		s.drain = stdio.DefaultDrainTimeout
	}
	s.httpCalls = httpfront.NewCalls(s.log.Named("http"))
	s.tasks = mcptask.NewStore(mcptask.Config{})
	// server/discover (2026-07-28) advertises the tasks extension; initialize
	// answers capabilities() without it: the extension does not exist
	// before 2026-07-28 (docs/decisions.md#D17).
	discover := capabilities()
	mcptask.Advertise(discover)
	s.info = &sdkmcp.Implementation{Name: ServerName, Version: s.version}
	s.sdk = sdkmcp.NewServer(s.info, &sdkmcp.ServerOptions{
		Instructions:              Instructions,
		Capabilities:              discover,
		SupportedProtocolVersions: sdkVersions(),
		Logger:                    newSlogLogger(s.log.Named("sdk")),
	})
	// The logs failed safe builds link to (docs/safe-build.md#12); the
	// handler reads build logs only.
	s.sdk.AddResourceTemplate(&sdkmcp.ResourceTemplate{
		URITemplate: "file:///{+path}", Name: "build-log", MIMEType: "text/plain",
		Description: "The complete output of a safe build: a file under a project's .buildguard/logs/, as a failed reclazz_safe_build result links it. " +
			"A read returns at most 1 MiB of it; when more follows, a second content's uri (?offset=N) reads the next part.",
	}, s.readBuildLog)
	ext := &mcptask.Extension{Store: s.tasks, Session: s.session2025}
	if err := ext.Register(s.sdk); err != nil {
		panic(err) // a clash with a standard method's name: a bug of this build
	}
	// Outermost first: recover wraps everything, including the SDK's own
	// handlers. A safe build that becomes a task runs the rest of the chain
	// (shaping included) as its work, detached from the request's
	// cancellation, which the HTTP middleware ties to its request.
	s.sdk.AddReceivingMiddleware(s.recoverPanics, s.httpCalls.Middleware, s.initialize,
		ext.Middleware, ext.ToolCalls(taskPolicy, msgTaskStarted), s.renderToolList, s.renderResources, s.renderToolCall)
	s.listing = sync.OnceValue(tools.Definitions)
	if s.caller == nil {
		s.service = tools.NewService(cfg.Tools)
		s.caller = s.service
	}
	return s
}

// msgTaskStarted is a new task's statusMessage until the build reports.
const msgTaskStarted = "starting the build"

// taskPolicy lets reclazz_safe_build, and only it, become a task
// (docs/decisions.md#D17).
func taskPolicy(p *sdkmcp.CallToolParamsRaw) mcptask.Support {
	if p.Name == tools.ToolSafeBuild {
		return mcptask.SupportOptional
	}
	return mcptask.SupportNone
}

// Close ends the safe builds that run as tasks, as a cancellation ends them
// (process group terminated, BUILD failed acknowledged; docs/decisions.md#D17),
// and waits for them until ctx ends. Finished tasks stay readable; no new
// task starts.
func (s *Server) Close(ctx context.Context) error { return s.tasks.Close(ctx) }

func capabilities() *sdkmcp.ServerCapabilities {
	return &sdkmcp.ServerCapabilities{Tools: &sdkmcp.ToolCapabilities{}, Resources: &sdkmcp.ResourceCapabilities{}}
}

// MaxLogReads is how many resources/read of build logs run at once; one
// more waits at most logReadWait for a turn (docs/safe-build.md#12).
const MaxLogReads = 4

// logReadWait bounds a resources/read's wait for a turn among MaxLogReads.
const logReadWait = 2 * time.Second

// codeBusy is the JSON-RPC server error of a request to retry later, as
// the stdio transport's busy batch is.
const codeBusy = -32000

// msgLogReadsBusy answers a resources/read that found no turn in time.
const msgLogReadsBusy = "too many build logs are being read at once; read it again shortly"

// readBuildLog serves resources/read of a build log's file URI, one part of
// at most safebuild.MaxLogRead bytes; anything else is "Resource not
// found", as an unknown resource is. A part that does not reach the end of
// the log is followed by a second content, a note whose URI reads the next
// part.
func (s *Server) readBuildLog(ctx context.Context, req *sdkmcp.ReadResourceRequest) (*sdkmcp.ReadResourceResult, error) {
	timer := time.NewTimer(s.logReadWait)
	defer timer.Stop()
	select {
	case s.logReads <- struct{}{}:
		defer func() { <-s.logReads }()
	case <-timer.C:
		return nil, &jsonrpc.Error{Code: codeBusy, Message: msgLogReadsBusy}
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	uri := req.Params.URI
	part, err := tools.ReadLogURI(uri)
	if err != nil {
		if errors.Is(err, safebuild.ErrLogOffset) {
			return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: err.Error()}
		}
		return nil, sdkmcp.ResourceNotFoundError(uri)
	}
	contents := []*sdkmcp.ResourceContents{{URI: uri, MIMEType: "text/plain", Text: part.Text}}
	if part.Next < part.Size {
		next := tools.LogPartURI(uri, part.Next)
		contents = append(contents, &sdkmcp.ResourceContents{URI: next, MIMEType: "text/plain", Text: fmt.Sprintf(
			"[buildguard: this part holds bytes %d to %d of the log's %d; read %s for the next part, or open the file itself]",
			part.Offset, part.Next, part.Size, next)})
	}
	return &sdkmcp.ReadResourceResult{Contents: contents}, nil
}

// ServeStdio runs one MCP session over stdio, in and out, until in reaches EOF (then it
// returns nil after draining, at most DrainTimeout for a cancelled batch) or
// ctx is cancelled. After a cancellation nothing more is read from in: a
// read blocked on an input that supports deadlines (a pipe, a socket) is
// interrupted, and any other reader stops at its next line.
func (s *Server) ServeStdio(ctx context.Context, in io.Reader, out io.Writer) error {
	t := &stdio.Transport{In: in, Out: out, BackgroundTool: tools.ToolVerifyBatch, InvalidArgs: s.invalidBatchArgs, DrainTimeout: s.drain,
		BuildTool: tools.ToolSafeBuild, Logger: s.log.Named("transport")}
	// The session starts out "initialized" at 2024-11-05 so the SDK serves
	// requests before initialize (in the legacy shape, docs/decisions.md#D5); the initialize
	// middleware answers initialize itself.
	ss, err := s.sdk.Connect(ctx, t, &sdkmcp.ServerSessionOptions{State: &sdkmcp.ServerSessionState{
		InitializeParams: &sdkmcp.InitializeParams{ProtocolVersion: protocol.Version20241105, Capabilities: &sdkmcp.ClientCapabilities{}},
	}})
	if err != nil {
		return fmt.Errorf("connecting MCP session: %w", err)
	}
	defer func() {
		s.mu.Lock()
		delete(s.sessions, ss)
		s.mu.Unlock()
	}()
	done := make(chan error, 1)
	go func() { done <- ss.Wait() }()
	select {
	case err = <-done:
	case <-t.Ended():
		if t.DrainExpired() {
			// The transport already waited DrainTimeout for the cancelled
			// batch; the contract allows that one wait, then exit 0 (docs/mcp-server.md#2.1).
			return nil
		}
		// Input ended and the transport drained; the SDK still waits for
		// handlers, which a tool ignoring cancellation could hold forever.
		timer := time.NewTimer(s.drain)
		defer timer.Stop()
		select {
		case err = <-done:
		case <-timer.C:
			s.log.Warn("exiting with a tool call still running", "waited", s.drain)
			return nil
		}
	case <-ctx.Done():
		_ = ss.Close()
		return ctx.Err()
	}
	if err != nil && !errors.Is(err, io.EOF) && !errors.Is(err, sdkmcp.ErrConnectionClosed) {
		return fmt.Errorf("serving MCP session: %w", err)
	}
	return nil
}

// invalidBatchArgs reports whether a verification batch with these raw
// arguments fails its argument checks (arguments that are not an object are
// the transport's own -32602 and never get here).
func (s *Server) invalidBatchArgs(rawArgs json.RawMessage) bool {
	args := map[string]json.RawMessage{}
	if len(rawArgs) > 0 {
		if err := json.Unmarshal(rawArgs, &args); err != nil || args == nil {
			return true
		}
	}
	return s.caller.Check(tools.ToolVerifyBatch, args) != nil
}

// sessionVersion is the negotiated version of ss; "" before initialize.
func (s *Server) sessionVersion(ss *sdkmcp.ServerSession) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.sessions[ss]
}

func serverSession(req sdkmcp.Request) *sdkmcp.ServerSession {
	ss, _ := req.GetSession().(*sdkmcp.ServerSession)
	return ss
}

// recoverPanics answers a panic anywhere below with -32603.
func (s *Server) recoverPanics(next sdkmcp.MethodHandler) sdkmcp.MethodHandler {
	return func(ctx context.Context, method string, req sdkmcp.Request) (res sdkmcp.Result, err error) {
		defer func() {
			if r := recover(); r != nil {
				s.log.Error("panic while handling a request", "method", method, "panic", fmt.Sprint(r))
				res, err = nil, internalError(req)
			}
		}()
		return next(ctx, method, req)
	}
}

// internalError is the -32603 of a broken invariant; for the batch tool the
// contract's "Batch processing failed".
func internalError(req sdkmcp.Request) error {
	msg := protocol.MsgInternal
	if p, ok := req.GetParams().(*sdkmcp.CallToolParamsRaw); ok && p != nil && p.Name == tools.ToolVerifyBatch {
		msg = msgBatchFailed
	}
	return &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: msg}
}

// initialize answers initialize with the docs/decisions.md#D5 policy: a served version is
// echoed, anything else gets the newest. A second successful initialize is
// refused with -32600. (A failed one never reaches here: the transport
// answers a missing or blank protocolVersion.)
func (s *Server) initialize(next sdkmcp.MethodHandler) sdkmcp.MethodHandler {
	return func(ctx context.Context, method string, req sdkmcp.Request) (sdkmcp.Result, error) {
		if method != protocol.MethodInitialize {
			return next(ctx, method, req)
		}
		p, _ := req.GetParams().(*sdkmcp.InitializeParams)
		ss := serverSession(req)
		if p == nil || ss == nil {
			return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: protocol.MsgInitVersion}
		}
		if httpfront.FromHTTP(req) {
			// Over HTTP every request has a session of its own; later
			// requests state their version in the MCP-Protocol-Version header.
			return s.initializeResult(negotiate(p.ProtocolVersion)), nil
		}
		s.mu.Lock()
		_, again := s.sessions[ss]
		v := negotiate(p.ProtocolVersion)
		if !again {
			s.sessions[ss] = v
		}
		s.mu.Unlock()
		if again {
			return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidRequest, Message: msgAlreadyInitialized}
		}
		return s.initializeResult(v), nil
	}
}

func (s *Server) initializeResult(v string) sdkmcp.Result {
	if v == protocol.Version20251125 {
		return s.initializeResult2025()
	}
	return &sdkmcp.InitializeResult{
		ProtocolVersion: v,
		Capabilities:    capabilities(),
		Instructions:    Instructions,
		ServerInfo:      &sdkmcp.Implementation{Name: ServerName, Version: s.version},
	}
}

// toolList is the wire shape of a tools/list result: {"tools":[…]} and
// nothing else, except for a 2026-07-28 request, whose result also carries
// resultType and the SDK's ttlMs/cacheScope cache hints (and, added by the
// SDK, the server's identity in _meta).
type toolList struct {
	sdkmcp.ResultBase
	ResultType string     `json:"resultType,omitempty"`
	TTLMs      *int       `json:"ttlMs,omitempty"`
	CacheScope string     `json:"cacheScope,omitempty"`
	Tools      []wireTool `json:"tools"`
}

// resultTypeComplete is the resultType of every 2026-07-28 result this
// server gives (it never asks the client for input).
const resultTypeComplete = "complete"

type wireTool struct {
	Name         string           `json:"name"`
	Description  string           `json:"description"`
	InputSchema  any              `json:"inputSchema"`
	OutputSchema any              `json:"outputSchema,omitempty"`
	Annotations  *wireAnnotations `json:"annotations,omitempty"`
	Execution    *wireExecution   `json:"execution,omitempty"`
}

// wireAnnotations renders hints as MCP defines them: destructiveHint and
// idempotentHint only mean something when readOnlyHint is false, so a
// read-only tool carries neither.
type wireAnnotations struct {
	ReadOnlyHint    bool  `json:"readOnlyHint"`
	OpenWorldHint   *bool `json:"openWorldHint,omitempty"`
	DestructiveHint *bool `json:"destructiveHint,omitempty"`
	IdempotentHint  *bool `json:"idempotentHint,omitempty"`
}

func renderAnnotations(a *sdkmcp.ToolAnnotations) *wireAnnotations {
	if a == nil {
		return nil
	}
	w := &wireAnnotations{ReadOnlyHint: a.ReadOnlyHint, OpenWorldHint: a.OpenWorldHint}
	if !a.ReadOnlyHint {
		w.DestructiveHint = a.DestructiveHint
		w.IdempotentHint = ptr(a.IdempotentHint)
	}
	return w
}

// renderTool is one tools/list entry in the shape of version v.
func (s *Server) renderTool(t *sdkmcp.Tool, v string) wireTool {
	sh := shapeFor(v)
	w := wireTool{Name: t.Name, Description: t.Description, InputSchema: t.InputSchema}
	if sh.outputSchema {
		w.OutputSchema = t.OutputSchema
	}
	if sh.annotations {
		w.Annotations = renderAnnotations(t.Annotations)
	}
	w.Execution = execution2025(t.Name, v)
	return w
}

// toolRank orders tools as [tools.All] lists them; unknown names go last.
func (s *Server) toolRank(name string) int {
	if i := slices.Index(s.names, name); i >= 0 {
		return i
	}
	return len(s.names)
}

// renderToolList answers tools/list with the tools' own list
// ([tools.Definitions]) in the contract's order and the session's shape. The
// tools are not registered with go-sdk: its AddTool checks each schema by
// encoding and decoding it, about 0.8 ms of a fresh process
// (docs/performance.md#2), for schemas that are constants of the build;
// TestSDKAcceptsTheTools runs those checks on every tool instead. go-sdk
// still answers first, with no tools, for the list's envelope (its cache
// hints). The transports never forward a cursor (docs/mcp-server.md#2.2):
// the list is always whole.
func (s *Server) renderToolList(next sdkmcp.MethodHandler) sdkmcp.MethodHandler {
	return func(ctx context.Context, method string, req sdkmcp.Request) (sdkmcp.Result, error) {
		if method != protocol.MethodToolsList {
			return next(ctx, method, req)
		}
		res, err := next(ctx, method, req)
		if err != nil {
			return nil, err
		}
		list, ok := res.(*sdkmcp.ListToolsResult)
		if !ok {
			return nil, fmt.Errorf("tools/list returned %T", res)
		}
		v := s.requestVersion(req)
		all := s.listing() // in tools/list order already
		out := &toolList{Tools: make([]wireTool, 0, len(all))}
		if shapeFor(v).sessionless {
			out.ResultType, out.TTLMs, out.CacheScope = resultTypeComplete, ptr(list.TTLMs), list.CacheScope
		}
		for _, t := range all {
			out.Tools = append(out.Tools, s.renderTool(t, v))
		}
		return out, nil
	}
}

// callResult is the wire shape of a tools/call result: isError is always
// present, structuredContent only in sessions from 2025-06-18 on.
type callResult struct {
	sdkmcp.ResultBase
	ResultType        string          `json:"resultType,omitempty"`
	Content           []any           `json:"content"` // textBlock, linkBlock
	StructuredContent json.RawMessage `json:"structuredContent,omitempty"`
	IsError           bool            `json:"isError"`
}

type textBlock struct {
	Type string `json:"type"`
	Text string `json:"text"`
}

// linkBlock is a resource_link content (from 2025-06-18 on).
type linkBlock struct {
	Type        string `json:"type"`
	URI         string `json:"uri"`
	Name        string `json:"name"`
	Description string `json:"description,omitempty"`
	MIMEType    string `json:"mimeType,omitempty"`
	Size        *int64 `json:"size,omitempty"`
}

// renderToolCall runs every tool call through handleTool, and unknown tool
// names through the Caller too (so their arguments are checked first and
// the error is "Unknown tool: …", docs/mcp-server.md#4.0), and renders
// every result in the wire shape. go-sdk's own tools/call, which knows no
// tool (renderToolList), only gets a call without params.
func (s *Server) renderToolCall(next sdkmcp.MethodHandler) sdkmcp.MethodHandler {
	return func(ctx context.Context, method string, req sdkmcp.Request) (sdkmcp.Result, error) {
		if method != protocol.MethodToolsCall {
			return next(ctx, method, req)
		}
		var res sdkmcp.Result
		var err error
		v := s.requestVersion(req)
		ctx = withVersion(ctx, v)
		p, _ := req.GetParams().(*sdkmcp.CallToolParamsRaw)
		call, isCall := req.(*sdkmcp.CallToolRequest)
		switch {
		case p != nil && s.toolRank(p.Name) == len(s.names):
			res, err = s.runTool(ctx, p.Name, p.Arguments)
		case p != nil && isCall:
			res, err = s.handleTool(ctx, call)
		default:
			res, err = next(ctx, method, req)
		}
		if err != nil {
			return nil, err
		}
		r, ok := res.(*sdkmcp.CallToolResult)
		if !ok {
			return nil, fmt.Errorf("tools/call returned %T", res)
		}
		out := &callResult{Content: []any{}, IsError: r.IsError}
		if shapeFor(v).sessionless {
			out.ResultType = resultTypeComplete
		}
		for _, c := range r.Content {
			switch c := c.(type) {
			case *sdkmcp.TextContent:
				out.Content = append(out.Content, textBlock{Type: "text", Text: c.Text})
			case *sdkmcp.ResourceLink:
				out.Content = append(out.Content, linkBlock{Type: "resource_link", URI: c.URI, Name: c.Name,
					Description: c.Description, MIMEType: c.MIMEType, Size: c.Size})
			}
		}
		if raw, ok := r.StructuredContent.(json.RawMessage); ok {
			out.StructuredContent = raw
		}
		return out, nil
	}
}

// handleTool is the sdkmcp.ToolHandler of every registered tool. A call
// with a progressToken gets its tool's progress as notifications/progress,
// on the call's own context (the stream of its request over HTTP), and none
// once the call is cancelled; a call that runs as a task reports it as the
// task's statusMessage.
func (s *Server) handleTool(ctx context.Context, req *sdkmcp.CallToolRequest) (*sdkmcp.CallToolResult, error) {
	if run := mcptask.RunFrom(ctx); run != nil {
		// A task reports its latest line as its statusMessage, never as
		// notifications (SEP-2663: progress is not sent for tasks).
		ctx = tools.WithProgress(ctx, func(_ int, message string) { run.Report(message) })
		ctx = tools.WithQueueProgress(ctx, run.Report) // its place while it waits (docs/decisions.md#D18)
		// A task was answered at once and is polled without a time limit:
		// it never answers running (docs/safe-build.md#14).
		ctx = tools.WithWholeBuild(ctx)
	} else if tok := req.Params.GetProgressToken(); tok != nil && req.Session != nil {
		ss := req.Session
		send := func(progress float64, message string) {
			if ctx.Err() != nil {
				return
			}
			p := &sdkmcp.ProgressNotificationParams{ProgressToken: tok, Progress: progress, Message: message}
			if err := ss.NotifyProgress(ctx, p); err != nil {
				s.log.Debug("sending progress failed", "error", err)
			}
		}
		ctx = tools.WithProgress(ctx, func(lines int, message string) { send(float64(lines), message) })
		// Queue reports come before the first output line: their progress
		// stays below 1 and grows with each (docs/safe-build.md#5).
		reports := 0
		ctx = tools.WithQueueProgress(ctx, func(message string) {
			reports++
			send(1-1/float64(reports+1), message)
		})
	}
	return s.runTool(ctx, req.Params.Name, req.Params.Arguments)
}

// runTool calls the Caller and shapes its outcome for the request's version,
// which renderToolCall put in ctx.
func (s *Server) runTool(ctx context.Context, name string, rawArgs json.RawMessage) (*sdkmcp.CallToolResult, error) {
	args := map[string]json.RawMessage{}
	if len(rawArgs) > 0 {
		if err := json.Unmarshal(rawArgs, &args); err != nil || args == nil {
			return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: protocol.MsgArgsObject}
		}
	}
	sh := shapeFor(ctxVersion(ctx))
	res, err := s.caller.Call(ctx, name, args)
	var argErr *tools.ArgError
	switch {
	case errors.As(err, &argErr):
		// A call of an unknown tool is a protocol error in every version
		// (docs/decisions.md#D5), even when its arguments fail first (docs/mcp-server.md#4.0 orders the message).
		if argErr.Protocol || !sh.argToolError || s.toolRank(name) == len(s.names) {
			return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: argErr.Message}
		}
		return &sdkmcp.CallToolResult{Content: []sdkmcp.Content{&sdkmcp.TextContent{Text: argErr.Message}}, IsError: true}, nil
	case err != nil:
		s.log.Error("tool failed with a broken invariant", "tool", name, "error", err)
		msg := protocol.MsgInternal
		if name == tools.ToolVerifyBatch {
			msg = msgBatchFailed
		}
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: msg}
	}
	if !sh.structured {
		return &sdkmcp.CallToolResult{Content: []sdkmcp.Content{&sdkmcp.TextContent{Text: res.LegacyText}}, IsError: res.IsError}, nil
	}
	text := string(res.Data)
	if res.Text != "" {
		text = res.Text
	}
	content := []sdkmcp.Content{&sdkmcp.TextContent{Text: text}}
	for _, l := range res.Links {
		link := &sdkmcp.ResourceLink{URI: l.URI, Name: l.Name, Description: l.Description, MIMEType: l.MIMEType}
		if l.Size >= 0 {
			link.Size = ptr(l.Size)
		}
		content = append(content, link)
	}
	return &sdkmcp.CallToolResult{
		Content:           content,
		StructuredContent: res.Data,
		IsError:           res.IsError,
	}, nil
}

func ptr[T any](v T) *T { return &v }
