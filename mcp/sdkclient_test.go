package mcp

import (
	"context"
	"io"
	"net/http/httptest"
	"slices"
	"testing"
	"time"

	sdkmcp "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/buildguard/buildguard/harness/mcptest"
	"github.com/buildguard/buildguard/internal/testsupport/lockedbuf"
	"github.com/buildguard/buildguard/mcp/httpfront"
	"github.com/buildguard/buildguard/mcp/protocol"
	"github.com/buildguard/buildguard/service/tools"
)

// connectSDKClient serves caller over pipes and connects a go-sdk client
// asking for version ("" = the client's default).
func connectSDKClient(t *testing.T, caller Caller, version string) *sdkmcp.ClientSession {
	t.Helper()
	return connectSDKClientWith(t, caller, version, nil)
}

// connectSDKClientWith is connectSDKClient with the client's options.
func connectSDKClientWith(t *testing.T, caller Caller, version string, opts *sdkmcp.ClientOptions) *sdkmcp.ClientSession {
	t.Helper()
	logs := &lockedbuf.Buffer{}
	srv := NewServer(Config{Caller: caller, Version: "test", Logger: mcptest.TestLogger(logs)})
	return serveSDKClient(t, srv, logs, version, opts)
}

// serveSDKClient serves srv, whose logger writes to logs, over pipes and
// connects a go-sdk client to it as connectSDKClientWith does.
func serveSDKClient(t *testing.T, srv *Server, logs *lockedbuf.Buffer, version string, opts *sdkmcp.ClientOptions) *sdkmcp.ClientSession {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	t.Cleanup(cancel)
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	served := make(chan error, 1)
	go func() {
		err := srv.ServeStdio(ctx, inR, outW)
		outW.Close()
		served <- err
	}()
	client := sdkmcp.NewClient(&sdkmcp.Implementation{Name: "test-client", Version: "1"}, opts)
	cs, err := client.Connect(ctx, &sdkmcp.IOTransport{Reader: outR, Writer: inW}, &sdkmcp.ClientSessionOptions{ProtocolVersion: version})
	if err != nil {
		t.Fatalf("client connect at %q: %v", version, err)
	}
	t.Cleanup(func() {
		_ = cs.Close()
		select {
		case err := <-served:
			if err != nil {
				t.Errorf("Serve: %v", err)
			}
		case <-time.After(10 * time.Second):
			t.Error("server did not stop after the client closed")
		}
		if logs.String() != "" {
			t.Errorf("server logged in a normal session:\n%s", logs.String())
		}
	})
	return cs
}

// TestSDKClient: the go-sdk client negotiates, pings, lists and calls at each
// version; the default client asks server/discover first and then sends
// every request sessionless at 2026-07-28 (docs/decisions.md#D14), answered in the 2025-11-25
// shape.
func TestSDKClient(t *testing.T) {
	t.Parallel()
	for _, c := range []struct{ ask, want string }{
		{protocol.Version20241105, protocol.Version20241105},
		{protocol.Version20250618, protocol.Version20250618},
		{protocol.Version20251125, protocol.Version20251125},
		{protocol.Version20260728, protocol.Version20260728},
		{"", protocol.Version20260728},
	} {
		t.Run("ask="+c.ask, func(t *testing.T) {
			t.Parallel()
			cs := connectSDKClient(t, &mcptest.FakeCaller{}, c.ask)
			ctx := context.Background()
			init := cs.InitializeResult()
			if init.ProtocolVersion != c.want {
				t.Errorf("negotiated %s, want %s", init.ProtocolVersion, c.want)
			}
			if init.ServerInfo.Name != ServerName || init.ServerInfo.Version != "test" || init.Instructions != Instructions {
				t.Errorf("initialize result: %+v", init)
			}
			//lint:ignore SA1019 the check is that the server does not advertise the deprecated logging capability.
			if init.Capabilities.Tools == nil || init.Capabilities.Logging != nil || init.Capabilities.Tools.ListChanged {
				t.Errorf("capabilities: %+v", init.Capabilities)
			}
			if err := cs.Ping(ctx, nil); err != nil {
				t.Errorf("ping: %v", err)
			}
			list, err := cs.ListTools(ctx, nil)
			if err != nil {
				t.Fatalf("tools/list: %v", err)
			}
			var names []string
			sh := shapeFor(c.want)
			for _, tool := range list.Tools {
				names = append(names, tool.Name)
				if (tool.OutputSchema != nil) != sh.outputSchema || (tool.Annotations != nil) != sh.annotations {
					t.Errorf("%s: outputSchema %v annotations %v at %s", tool.Name, tool.OutputSchema != nil, tool.Annotations != nil, c.want)
				}
			}
			if !slices.Equal(names, tools.Names()) {
				t.Errorf("tools %v, want %v", names, tools.Names())
			}
			res, err := cs.CallTool(ctx, &sdkmcp.CallToolParams{Name: tools.ToolScan, Arguments: map[string]any{}})
			if err != nil {
				t.Fatalf("tools/call: %v", err)
			}
			if (res.StructuredContent != nil) != sh.structured || res.IsError || len(res.Content) != 1 {
				t.Errorf("call result at %s: %+v", c.want, res)
			}
		})
	}
}

// connectSDKClientHTTP serves caller over streamable HTTP on a loopback
// listener and connects a go-sdk streamable client asking for version.
func connectSDKClientHTTP(t *testing.T, caller Caller, version string, opts *sdkmcp.ClientOptions) *sdkmcp.ClientSession {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	t.Cleanup(cancel)
	logs := &lockedbuf.Buffer{}
	srv := NewServer(Config{Caller: caller, Version: "test", Logger: mcptest.TestLogger(logs)})
	h := srv.HTTPHandler(testToken)
	ts := httptest.NewServer(h)
	client := sdkmcp.NewClient(&sdkmcp.Implementation{Name: "test-client", Version: "1"}, opts)
	cs, err := client.Connect(ctx, &sdkmcp.StreamableClientTransport{Endpoint: ts.URL + httpfront.HTTPPath + "?token=" + testToken, DisableStandaloneSSE: true}, &sdkmcp.ClientSessionOptions{ProtocolVersion: version})
	if err != nil {
		ts.Close()
		t.Fatalf("HTTP client connect at %q: %v", version, err)
	}
	t.Cleanup(func() {
		_ = cs.Close()
		h.Close()
		ts.Close()
		if logs.String() != "" {
			t.Errorf("server logged in a normal session:\n%s", logs.String())
		}
	})
	return cs
}
