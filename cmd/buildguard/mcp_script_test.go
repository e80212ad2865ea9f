//go:build unix

package main

import (
	"context"
	"maps"
	"os/exec"
	"path/filepath"
	"slices"
	"testing"
	"time"

	sdkmcp "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/rogpeppe/go-internal/testscript"

	"github.com/buildguard/buildguard/service/tools"
)

// TestMCPScripts runs the `buildguard mcp` transcripts in testdata/mcp: the
// startup CLI, a stdio session through the real binary, and the go-sdk client
// driving the binary over sdkmcp.CommandTransport.
func TestMCPScripts(t *testing.T) {
	t.Parallel()
	cmds := map[string]func(ts *testscript.TestScript, neg bool, args []string){"sdkclient": cmdSDKClient}
	maps.Copy(cmds, httpScriptCmds)
	testscript.Run(t, scriptParams("testdata/mcp", cmds))
}

// sdkclient VERSION|default [ARG...]: starts `buildguard mcp ARG...` through
// the go-sdk CommandTransport, asking for VERSION, and checks the negotiated
// version, ping, the ten tools in order and their shape; it prints the
// negotiated version on stdout.
func cmdSDKClient(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) < 1 {
		ts.Fatalf("usage: sdkclient VERSION|default [ARG...]")
	}
	ask := args[0]
	if ask == "default" {
		ask = ""
	}
	bin := lookPath(ts, "buildguard")
	cmd := exec.Command(bin, append([]string{"mcp"}, args[1:]...)...)
	cmd.Dir = ts.Getenv("WORK")
	cmd.Env = append(cmd.Environ(), "BUILDGUARD_LOG_LEVEL=")
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	client := sdkmcp.NewClient(&sdkmcp.Implementation{Name: "script", Version: "1"}, nil)
	cs, err := client.Connect(ctx, &sdkmcp.CommandTransport{Command: cmd}, &sdkmcp.ClientSessionOptions{ProtocolVersion: ask})
	ts.Check(err)
	defer cs.Close()
	v := cs.InitializeResult().ProtocolVersion
	ts.Check(cs.Ping(ctx, nil))
	list, err := cs.ListTools(ctx, nil)
	ts.Check(err)
	var names []string
	structured := v >= "2025-06-18"
	for _, tool := range list.Tools {
		names = append(names, tool.Name)
		if (tool.OutputSchema != nil) != structured {
			ts.Fatalf("%s at %s: outputSchema present=%v", tool.Name, v, tool.OutputSchema != nil)
		}
	}
	if !slices.Equal(names, tools.Names()) {
		ts.Fatalf("tools %v, want %v", names, tools.Names())
	}
	ts.Check(cs.Close())
	ts.Stdout().Write([]byte(v + "\n"))
}

func lookPath(ts *testscript.TestScript, name string) string {
	for _, dir := range filepath.SplitList(ts.Getenv("PATH")) {
		p := filepath.Join(dir, name)
		if _, err := exec.LookPath(p); err == nil {
			return p
		}
	}
	ts.Fatalf("%s not on the script's PATH", name)
	return ""
}
