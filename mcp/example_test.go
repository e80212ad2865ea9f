package mcp_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strings"

	"github.com/buildguard/buildguard/mcp"
	"github.com/buildguard/buildguard/service/tools"
)

// staticCaller answers every tool with the same result.
type staticCaller struct{}

func (staticCaller) Call(context.Context, string, map[string]json.RawMessage) (tools.Result, error) {
	return tools.Result{Data: json.RawMessage(`{"attached":false,"reason":"no agent"}`), LegacyText: `{"attached":false,"reason":"no agent"}`}, nil
}

func (staticCaller) Check(string, map[string]json.RawMessage) error { return nil }

// A session over stdin-like input: every answer is one line on the output,
// with the id exactly as the client wrote it.
func ExampleServer_ServeStdio() {
	in := strings.NewReader(`{"jsonrpc":"2.0","id":1.0,"method":"ping"}
{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"reclazz_status"}}
not json
`)
	srv := mcp.NewServer(mcp.Config{Caller: staticCaller{}, Version: "v1.0.0"})
	if err := srv.ServeStdio(context.Background(), in, os.Stdout); err != nil {
		fmt.Println(err)
	}
	// Output:
	// {"jsonrpc":"2.0","id":1.0,"result":{}}
	// {"jsonrpc":"2.0","id":2,"result":{"content":[{"type":"text","text":"{\"attached\":false,\"reason\":\"no agent\"}"}],"isError":false}}
	// {"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"Parse error"}}
}
