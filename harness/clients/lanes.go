//go:build unix

package clients

import (
	"context"
	"fmt"
	"runtime/debug"
)

// GoSDKModule is the Go SDK module the Go lanes use.
const GoSDKModule = "github.com/modelcontextprotocol/go-sdk"

// GoSDKVersions are the protocol versions the Go SDK stdio lanes ask for,
// one lane each; VersionDefault is the SDK's own default (2026-07-28 since
// buildguard answers server/discover).
var GoSDKVersions = []string{Version20241105, Version20250326, Version20250618, Version20251125, VersionDefault, Version20260728}

// GoLane is one Go SDK lane: the version it asks for and how it reaches
// buildguard mcp.
type GoLane struct {
	Version string
	// HTTP makes the lane start `buildguard mcp --http 127.0.0.1:0` and
	// connect with go-sdk's StreamableClientTransport; else stdio.
	HTTP bool
}

// GoSDKLanes are the Go SDK lanes in run order: every stdio version, then
// the HTTP lanes (2025-11-25 through initialize, the default sessionless
// 2026-07-28). A new lane is one more entry.
var GoSDKLanes = append(goStdioLanes(), GoLane{Version: Version20251125, HTTP: true}, GoLane{Version: VersionDefault, HTTP: true})

func goStdioLanes() []GoLane {
	var l []GoLane
	for _, v := range GoSDKVersions {
		l = append(l, GoLane{Version: v})
	}
	return l
}

// Name is the lane's name: go-sdk[-http]-VERSION, or -default.
func (l GoLane) Name() string {
	n := "go-sdk-"
	if l.HTTP {
		n = "go-sdk-http-"
	}
	if l.Version == VersionDefault {
		return n + "default"
	}
	return n + l.Version
}

// GoSDKLaneName names the Go SDK stdio lane for a requested version.
func GoSDKLaneName(version string) string { return GoLane{Version: version}.Name() }

// GoSDKVersion is the linked go-sdk module version, or "unknown".
func GoSDKVersion() string {
	if bi, ok := debug.ReadBuildInfo(); ok {
		for _, d := range bi.Deps {
			if d.Path == GoSDKModule {
				if d.Replace != nil {
					return d.Replace.Version
				}
				return d.Version
			}
		}
	}
	return "unknown"
}

// GoSDKDial returns a LaneConfig.Dial for the go-sdk client of lane l.
func GoSDKDial(l GoLane) func(context.Context, ServerCommand) (Client, error) {
	return func(ctx context.Context, s ServerCommand) (Client, error) {
		if l.HTTP {
			return DialGoSDKHTTP(ctx, l.Name(), s, l.Version)
		}
		return DialGoSDK(ctx, l.Name(), s, l.Version)
	}
}

// GoSDKReferenceSchemas lists the tools in a separate 2025-06-18 go-sdk
// session and compiles their output schemas, for legacy sessions that do not
// advertise them.
func GoSDKReferenceSchemas(ctx context.Context, s ServerCommand) (*Schemas, error) {
	c, err := DialGoSDK(ctx, "reference-schemas", s, Version20250618)
	if err != nil {
		return nil, err
	}
	defer c.Close()
	tools, err := c.ListTools(ctx)
	if err != nil {
		return nil, err
	}
	if v := c.ProtocolVersion(); v != Version20250618 {
		return nil, fmt.Errorf("reference session negotiated %s, want %s", v, Version20250618)
	}
	return CompileSchemas(tools)
}

// GoSDKLane returns the LaneConfig of Go SDK lane l; the caller fills in
// WorkDir, Binary, AgentJar and Metadata.
func GoSDKLane(l GoLane) LaneConfig {
	return LaneConfig{
		Name:             l.Name(),
		Dial:             GoSDKDial(l),
		ReferenceSchemas: GoSDKReferenceSchemas,
	}
}

// TSLane is one TypeScript SDK lane (the SDK's default version).
type TSLane struct {
	// HTTP makes the lane connect with StreamableHTTPClientTransport to
	// `buildguard mcp --http 127.0.0.1:0`; else StdioClientTransport.
	HTTP bool
}

// TSLanes are the TypeScript SDK lanes in run order.
var TSLanes = []TSLane{{}, {HTTP: true}}

// Name is ts-sdk or ts-sdk-http.
func (l TSLane) Name() string {
	if l.HTTP {
		return TSLaneName + "-http"
	}
	return TSLaneName
}

// TasksLanes are the lanes of the independent tasks client (TasksClient):
// every request 2026-07-28 and declaring io.modelcontextprotocol/tasks, so
// each reclazz_safe_build runs as a task that the client polls to its end
// (docs/safe-build.md#13); over stdio and over mcp --http.
var TasksLanes = []string{"tasks-stdio", "tasks-http"}

// TasksLane returns the LaneConfig of tasks lane name; the caller fills in
// WorkDir, Binary, AgentJar and Metadata.
func TasksLane(name string) LaneConfig {
	dial := DialTasksStdio
	if name == "tasks-http" {
		dial = DialTasksHTTP
	}
	return LaneConfig{
		Name: name,
		Dial: func(ctx context.Context, s ServerCommand) (Client, error) {
			c, err := dial(ctx, name, s)
			if err != nil {
				return nil, err
			}
			return &tasksLaneClient{c}, nil
		},
		ReferenceSchemas: GoSDKReferenceSchemas,
	}
}

// tasksLaneClient fails the lane when a safe build was not answered with a
// task: the lane exists to prove that path.
type tasksLaneClient struct{ *TasksClient }

func (c *tasksLaneClient) CallProgress(ctx context.Context, name string, args map[string]any, onProgress func(float64, string)) (CallResult, error) {
	before := c.Tasks()
	res, err := c.TasksClient.CallProgress(ctx, name, args, onProgress)
	if err == nil && name == "reclazz_safe_build" && res.RPCCode == 0 && c.Tasks() == before {
		return res, fmt.Errorf("reclazz_safe_build was answered without a task")
	}
	return res, err
}

func (c *tasksLaneClient) Call(ctx context.Context, name string, args map[string]any) (CallResult, error) {
	return c.CallProgress(ctx, name, args, nil)
}
