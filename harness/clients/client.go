//go:build unix

package clients

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"sync"
	"time"

	"github.com/buildguard/buildguard/internal/testsupport/lockedbuf"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdkmcp "github.com/modelcontextprotocol/go-sdk/mcp"
)

// Protocol versions a lane can ask for. VersionDefault asks for nothing: the
// client SDK's own default.
const (
	Version20241105 = "2024-11-05"
	Version20250326 = "2025-03-26"
	Version20250618 = "2025-06-18"
	Version20251125 = "2025-11-25"
	Version20260728 = "2026-07-28"
	VersionDefault  = ""
)

// CallTimeout bounds one MCP request from a lane.
const CallTimeout = 15 * time.Second

// ToolInfo is one tools/list entry as a client saw it.
type ToolInfo struct {
	Name string
	// OutputSchema is the advertised output schema, or nil.
	OutputSchema json.RawMessage
	// HasAnnotations reports whether annotations were advertised.
	HasAnnotations bool
}

// CallResult is one tools/call outcome as a client saw it: either a tool
// result or a JSON-RPC error (RPCCode non-zero).
type CallResult struct {
	IsError bool
	// Texts are the text content blocks.
	Texts []string
	// Structured is structuredContent re-encoded as JSON, or nil when absent.
	Structured json.RawMessage
	// RPCCode and RPCMessage describe a JSON-RPC error answer; RPCCode is 0
	// for a tool result.
	RPCCode    int64
	RPCMessage string
}

// Client is what a lane needs from an MCP client: the scenario runner is
// written against it, so a lane is one implementation.
type Client interface {
	// Lane names the lane, e.g. "go-sdk 2025-06-18".
	Lane() string
	// ProtocolVersion is the negotiated protocol version.
	ProtocolVersion() string
	// ServerName and ServerVersion are the initialize serverInfo.
	ServerName() string
	ServerVersion() string
	// Ping sends ping.
	Ping(ctx context.Context) error
	// ListTools returns tools/list.
	ListTools(ctx context.Context) ([]ToolInfo, error)
	// Call runs tools/call. A JSON-RPC error is a CallResult with RPCCode,
	// not a Go error; a Go error means the transport broke.
	Call(ctx context.Context, name string, args map[string]any) (CallResult, error)
	// CallProgress runs tools/call with a fresh progress token and hands
	// every notifications/progress for it to onProgress, in order, as it
	// arrives. Cancelling ctx cancels the call (notifications/cancelled)
	// and returns ctx's error.
	CallProgress(ctx context.Context, name string, args map[string]any, onProgress func(progress float64, message string)) (CallResult, error)
	// Close ends the session and the server process.
	Close() error
}

// ServerCommand describes how a lane starts `buildguard mcp`.
type ServerCommand struct {
	// Binary is the buildguard binary.
	Binary string
	// Args are the arguments, e.g. mcp --project-dir P --port-file agent.port.
	Args []string
	// Dir is the server's working directory (the unrelated launch directory).
	Dir string
}

func (s ServerCommand) cmd(stderr io.Writer) *exec.Cmd {
	c := exec.Command(s.Binary, s.Args...)
	c.Dir = s.Dir
	c.Env = os.Environ()
	c.Stderr = stderr
	return c
}

// GoSDKClient is the go-sdk v1.8.0 client over CommandTransport.
type GoSDKClient struct {
	lane    string
	session *sdkmcp.ClientSession
	stderr  *lockedbuf.Buffer

	mu       sync.Mutex
	tokens   int
	progress map[string]func(float64, string) // by progress token
}

// newGoSDKClient returns a GoSDKClient for lane, without a session yet, and
// the go-sdk client to connect it with: its progress notifications go to
// the CallProgress call whose token they carry.
func newGoSDKClient(lane string) (*GoSDKClient, *sdkmcp.Client) {
	c := &GoSDKClient{lane: lane, progress: map[string]func(float64, string){}}
	client := sdkmcp.NewClient(&sdkmcp.Implementation{Name: "buildguard-client-matrix", Version: "1"}, &sdkmcp.ClientOptions{
		ProgressNotificationHandler: func(_ context.Context, req *sdkmcp.ProgressNotificationClientRequest) {
			tok, _ := req.Params.ProgressToken.(string)
			c.mu.Lock()
			f := c.progress[tok]
			c.mu.Unlock()
			if f != nil {
				f(req.Params.Progress, req.Params.Message)
			}
		},
	})
	return c, client
}

// DialGoSDK starts the server with go-sdk's CommandTransport and initializes
// a session asking for version (VersionDefault: the SDK's default).
func DialGoSDK(ctx context.Context, lane string, server ServerCommand, version string) (*GoSDKClient, error) {
	c, client := newGoSDKClient(lane)
	stderr := &lockedbuf.Buffer{}
	transport := &sdkmcp.CommandTransport{Command: server.cmd(stderr), TerminateDuration: 2 * time.Second}
	ctx, cancel := context.WithTimeout(ctx, CallTimeout)
	defer cancel()
	var opts *sdkmcp.ClientSessionOptions
	if version != VersionDefault {
		opts = &sdkmcp.ClientSessionOptions{ProtocolVersion: version}
	}
	session, err := client.Connect(ctx, transport, opts)
	if err != nil {
		return nil, fmt.Errorf("connecting go-sdk client (%s): %w", lane, err)
	}
	c.session, c.stderr = session, stderr
	return c, nil
}

// ServerStderr is what the server wrote to stderr so far (it must write
// nothing in a normal session).
func (c *GoSDKClient) ServerStderr() string { return c.stderr.String() }

// Lane implements Client.
func (c *GoSDKClient) Lane() string { return c.lane }

// ProtocolVersion implements Client.
func (c *GoSDKClient) ProtocolVersion() string {
	if r := c.session.InitializeResult(); r != nil {
		return r.ProtocolVersion
	}
	return ""
}

// ServerName implements Client.
func (c *GoSDKClient) ServerName() string {
	if r := c.session.InitializeResult(); r != nil && r.ServerInfo != nil {
		return r.ServerInfo.Name
	}
	return ""
}

// ServerVersion implements Client.
func (c *GoSDKClient) ServerVersion() string {
	if r := c.session.InitializeResult(); r != nil && r.ServerInfo != nil {
		return r.ServerInfo.Version
	}
	return ""
}

// Ping implements Client.
func (c *GoSDKClient) Ping(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, CallTimeout)
	defer cancel()
	return c.session.Ping(ctx, nil)
}

// ListTools implements Client.
func (c *GoSDKClient) ListTools(ctx context.Context) ([]ToolInfo, error) {
	ctx, cancel := context.WithTimeout(ctx, CallTimeout)
	defer cancel()
	res, err := c.session.ListTools(ctx, nil)
	if err != nil {
		return nil, fmt.Errorf("tools/list: %w", err)
	}
	var out []ToolInfo
	for _, t := range res.Tools {
		ti := ToolInfo{Name: t.Name, HasAnnotations: t.Annotations != nil}
		if t.OutputSchema != nil {
			b, err := json.Marshal(t.OutputSchema)
			if err != nil {
				return nil, fmt.Errorf("encoding outputSchema of %s: %w", t.Name, err)
			}
			ti.OutputSchema = b
		}
		out = append(out, ti)
	}
	return out, nil
}

// Call implements Client.
func (c *GoSDKClient) Call(ctx context.Context, name string, args map[string]any) (CallResult, error) {
	return c.call(ctx, &sdkmcp.CallToolParams{Name: name, Arguments: args})
}

// CallProgress implements Client.
func (c *GoSDKClient) CallProgress(ctx context.Context, name string, args map[string]any, onProgress func(float64, string)) (CallResult, error) {
	c.mu.Lock()
	c.tokens++
	tok := fmt.Sprintf("%s-progress-%d", c.lane, c.tokens)
	c.progress[tok] = onProgress
	c.mu.Unlock()
	defer func() {
		c.mu.Lock()
		delete(c.progress, tok)
		c.mu.Unlock()
	}()
	p := &sdkmcp.CallToolParams{Name: name, Arguments: args}
	p.SetProgressToken(tok)
	return c.call(ctx, p)
}

func (c *GoSDKClient) call(ctx context.Context, p *sdkmcp.CallToolParams) (CallResult, error) {
	name := p.Name
	ctx, cancel := context.WithTimeout(ctx, CallTimeout)
	defer cancel()
	res, err := c.session.CallTool(ctx, p)
	if err != nil {
		if ctx.Err() != nil {
			return CallResult{}, ctx.Err()
		}
		var rpcErr *jsonrpc.Error
		if errors.As(err, &rpcErr) {
			return CallResult{RPCCode: rpcErr.Code, RPCMessage: rpcErr.Message}, nil
		}
		return CallResult{}, fmt.Errorf("tools/call %s: %w", name, err)
	}
	out := CallResult{IsError: res.IsError}
	for _, ct := range res.Content {
		if tc, ok := ct.(*sdkmcp.TextContent); ok {
			out.Texts = append(out.Texts, tc.Text)
		}
	}
	if res.StructuredContent != nil {
		b, err := json.Marshal(res.StructuredContent)
		if err != nil {
			return CallResult{}, fmt.Errorf("encoding structuredContent of %s: %w", name, err)
		}
		out.Structured = b
	}
	return out, nil
}

// Close implements Client.
func (c *GoSDKClient) Close() error { return c.session.Close() }
