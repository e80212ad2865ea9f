// Command stdio is the floor of a buildguard stdio MCP session: a go-sdk
// server with one typed tool, served over go-sdk's stdio transport until
// stdin ends (docs/performance.md#1).
package main

import (
	"context"
	"fmt"
	"os"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

type in struct {
	Name string `json:"name" jsonschema:"who to greet"`
}

type out struct {
	Greeting string `json:"greeting"`
}

func main() {
	srv := mcp.NewServer(&mcp.Implementation{Name: "floor", Version: "1"}, nil)
	mcp.AddTool(srv, &mcp.Tool{Name: "greet", Description: "say hello"}, func(_ context.Context, _ *mcp.CallToolRequest, a in) (*mcp.CallToolResult, out, error) {
		return nil, out{Greeting: "hello " + a.Name}, nil
	})
	if err := srv.Run(context.Background(), &mcp.StdioTransport{}); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}
