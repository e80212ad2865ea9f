package main

import (
	"context"
	"log/slog"
	"net/http"

	sdkmcp "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/buildguard/buildguard/service/mcptask"
)

// fixture is the fixture server: a go-sdk server with the suite's tools,
// resources and prompts, the tasks extension on buildguard's task store.
type fixture struct {
	sdk   *sdkmcp.Server
	info  *sdkmcp.Implementation
	store *mcptask.Store
	stop  context.CancelFunc // ends the watched resource's updates
}

func newFixture() *fixture {
	// Only the extension is set; go-sdk infers the rest from what is
	// registered and the handlers below.
	caps := &sdkmcp.ServerCapabilities{}
	mcptask.Advertise(caps)
	f := &fixture{store: mcptask.NewStore(mcptask.Config{})}
	f.info = &sdkmcp.Implementation{Name: "buildguard-mcpfixture", Version: "1"}
	f.sdk = sdkmcp.NewServer(f.info, &sdkmcp.ServerOptions{
		Capabilities: caps,
		Logger:       slog.New(slog.DiscardHandler),
		CompletionHandler: func(context.Context, *sdkmcp.CompleteRequest) (*sdkmcp.CompleteResult, error) {
			return &sdkmcp.CompleteResult{Completion: sdkmcp.CompletionResultDetails{Values: []string{}}}, nil
		},
		// go-sdk keeps the subscriptions; ResourceUpdated notifies them.
		SubscribeHandler:   func(context.Context, *sdkmcp.SubscribeRequest) error { return nil },
		UnsubscribeHandler: func(context.Context, *sdkmcp.UnsubscribeRequest) error { return nil },
	})
	ext := &mcptask.Extension{Store: f.store}
	if err := ext.Register(f.sdk); err != nil {
		panic(err) // only a name clash with a standard method, fixed at build time
	}
	f.sdk.AddReceivingMiddleware(ext.Middleware, ext.ToolCalls(taskPolicy, "working"))
	registerTaskTools(f.sdk)
	registerContentTools(f.sdk)
	registerResources(f.sdk)
	registerPrompts(f.sdk)
	var ctx context.Context
	ctx, f.stop = context.WithCancel(context.Background())
	go watchResource(ctx, f.sdk)
	return f
}

// handler serves the fixture over streamable HTTP: statelessly through
// buildguard's HTTP front (frontHandler), or with sessions on go-sdk's own
// handler. The front serves every request on its own, as 2026-07-28 does;
// the 2025-11-25 scenarios that send the client requests on a session's
// stream (sampling, elicitation, a second stream) need the session
// (docs/http.md#6.2).
func (f *fixture) handler(stateful bool) http.Handler {
	if !stateful {
		return f.frontHandler()
	}
	return sdkmcp.NewStreamableHTTPHandler(func(*http.Request) *sdkmcp.Server { return f.sdk }, &sdkmcp.StreamableHTTPOptions{})
}

// close cancels the running tasks and waits for them.
func (f *fixture) close(ctx context.Context) error {
	f.stop()
	return f.store.Close(ctx)
}
