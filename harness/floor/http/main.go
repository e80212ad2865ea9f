// Command http is the floor of buildguard's streamable HTTP front: go-sdk's
// stateless streamable handler (JSON answers) with ten trivial tools on a
// loopback port, whose URL it writes to the file named by its one argument
// (docs/performance.md#1). It serves until it is killed.
package main

import (
	"context"
	"fmt"
	"net"
	"net/http"
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
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: http URL-FILE")
		os.Exit(2)
	}
	srv := mcp.NewServer(&mcp.Implementation{Name: "floor", Version: "1"}, nil)
	for i := range 10 {
		mcp.AddTool(srv, &mcp.Tool{Name: fmt.Sprintf("tool_%d", i), Description: "say hello"}, func(_ context.Context, _ *mcp.CallToolRequest, a in) (*mcp.CallToolResult, out, error) {
			return nil, out{Greeting: "hello " + a.Name}, nil
		})
	}
	h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, &mcp.StreamableHTTPOptions{Stateless: true, JSONResponse: true})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	if err := os.WriteFile(os.Args[1], []byte("http://"+ln.Addr().String()+"/mcp\n"), 0o600); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	mux := http.NewServeMux()
	mux.Handle("/mcp", h)
	fmt.Fprintln(os.Stderr, http.Serve(ln, mux))
	os.Exit(1)
}
