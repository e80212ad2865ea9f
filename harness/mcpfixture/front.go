package main

import (
	"encoding/json"
	"net/http"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdkmcp "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/buildguard/buildguard/mcp/httpfront"
	"github.com/buildguard/buildguard/mcp/protocol"
	"github.com/buildguard/buildguard/service/mcptask"
)

// fixtureMethods are the requests the fixture serves: go-sdk's own methods
// for what it registers (tools, prompts, completions, resources and their
// subscriptions, logging) and the tasks extension's. The front answers any
// other method -32601 (404 at 2026-07-28), as it does for buildguard.
var fixtureMethods = map[string]bool{
	"initialize": true, "ping": true, "server/discover": true,
	"tools/list": true, "tools/call": true,
	"prompts/list": true, "prompts/get": true, "completion/complete": true,
	"resources/list": true, "resources/read": true, "resources/templates/list": true,
	"resources/subscribe": true, "resources/unsubscribe": true, "subscriptions/listen": true,
	"logging/setLevel": true,
	mcptask.MethodGet:  true, mcptask.MethodCancel: true, mcptask.MethodUpdate: true,
}

// forward is the fixture's httpfront.Fixture.Forward: a method it serves,
// with params that are an object nesting at most protocol.MaxParamsDepth
// levels, goes to the SDK with its params as they are (the suite's
// scenarios send fields buildguard's own methods drop: inputResponses,
// requestState, cursors, filters).
func forward(m protocol.Message) (json.RawMessage, *protocol.Refusal) {
	if !fixtureMethods[m.Method] {
		return nil, &protocol.Refusal{ID: m.ID.Raw, Code: jsonrpc.CodeMethodNotFound, Message: "Method not found: " + m.Method}
	}
	if m.HasParams && !protocol.IsObject(m.Params) {
		return nil, &protocol.Refusal{ID: m.ID.Raw, Code: jsonrpc.CodeInvalidParams, Message: protocol.MsgParamsObject}
	}
	if protocol.Depth(m.Params) > protocol.MaxParamsDepth {
		return nil, &protocol.Refusal{ID: m.ID.Raw, Code: jsonrpc.CodeInvalidParams, Message: protocol.MsgParamsTooDeep}
	}
	return m.Params, nil
}

// frontHandler serves the fixture statelessly through buildguard's HTTP
// front (mcp/httpfront) without a token: its Origin/Host rules, envelope
// and _meta checks, version handling, Mcp-Name check of tasks/*, id
// relaying and cancellation, as `buildguard mcp --http` serves.
func (f *fixture) frontHandler() http.Handler {
	calls := httpfront.NewCalls(nil)
	f.sdk.AddReceivingMiddleware(calls.Middleware)
	return httpfront.New(httpfront.Config{
		SDK:        f.sdk,
		Calls:      calls,
		Versions:   sdkmcp.SupportedProtocolVersions(),
		Fixture:    &httpfront.Fixture{Forward: forward},
		Tasks:      f.store,
		ServerInfo: f.info,
	})
}
