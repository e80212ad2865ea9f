package cli

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/buildguard/buildguard/harness/fakeagent"
	"github.com/buildguard/buildguard/mcp"
	"github.com/buildguard/buildguard/service/tools"
)

const idSHA = "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08"

// mcpCall runs one tools/call in a 2025-06-18 MCP session and returns the
// result's text and structuredContent.
func mcpCall(t *testing.T, tool string, args map[string]any) (text string, structured json.RawMessage, isError bool) {
	t.Helper()
	init := `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"identity","version":"1"}}}`
	call, err := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": map[string]any{"name": tool, "arguments": args}})
	if err != nil {
		t.Fatal(err)
	}
	// Stdin stays open until the answer is read: EOF would cancel a batch.
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	srv := mcp.NewServer(mcp.Config{Caller: tools.NewService(tools.Deps{})})
	done := make(chan error, 1)
	go func() { done <- srv.ServeStdio(context.Background(), inR, outW); outW.Close() }()
	go inW.Write([]byte(init + "\n" + string(call) + "\n"))
	defer func() {
		inW.Close()
		io.Copy(io.Discard, outR)
		if err := <-done; err != nil {
			t.Errorf("Serve: %v", err)
		}
	}()
	sc := bufio.NewScanner(outR)
	sc.Buffer(nil, 1<<20)
	var seen []string
	for sc.Scan() {
		line := sc.Text()
		seen = append(seen, line)
		var resp struct {
			ID     json.RawMessage `json:"id"`
			Result struct {
				Content []struct {
					Text string `json:"text"`
				} `json:"content"`
				Structured json.RawMessage `json:"structuredContent"`
				IsError    bool            `json:"isError"`
			} `json:"result"`
		}
		if err := json.Unmarshal([]byte(line), &resp); err != nil {
			t.Fatalf("MCP line %q: %v", line, err)
		}
		if string(resp.ID) == "1" {
			if len(resp.Result.Content) != 1 {
				t.Fatalf("MCP answer %s", line)
			}
			return resp.Result.Content[0].Text, resp.Result.Structured, resp.Result.IsError
		}
	}
	t.Fatalf("no answer to the call in %q", seen)
	return "", nil, false
}

// TestCLIAndMCPGiveTheSameJSON runs each tool subcommand and the matching MCP
// tool over the same fake-agent state: the CLI prints byte for byte the
// tool's JSON text, and its exit code follows isError.
func TestCLIAndMCPGiveTheSameJSON(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name string
		cli  []string
		tool string
		args map[string]any
	}{
		{"status", []string{"status"}, tools.ToolStatus, nil},
		{"doctor", []string{"doctor"}, tools.ToolDoctor, nil},
		{"scan", []string{"scan"}, tools.ToolScan, nil},
		{"pending", []string{"pending"}, tools.ToolPending, nil},
		{"diagnose", []string{"diagnose", "com.acme.A"}, tools.ToolDiagnose, map[string]any{"className": "com.acme.A"}},
		{"verify applied", []string{"verify", "com.acme.A", idSHA}, tools.ToolVerify, map[string]any{"className": "com.acme.A", "sha256": idSHA}},
		{"verify not observed", []string{"verify", "com.acme.B", idSHA}, tools.ToolVerify, map[string]any{"className": "com.acme.B", "sha256": idSHA}},
		{"verify-batch", []string{"verify-batch", "com.acme.A=" + idSHA, "com.acme.B=" + idSHA}, tools.ToolVerifyBatch,
			map[string]any{"items": []map[string]string{{"className": "com.acme.A", "sha256": idSHA}, {"className": "com.acme.B", "sha256": idSHA}}}},
		{"reload status", []string{"reload", "status"}, tools.ToolReloadControl, map[string]any{"action": "status"}},
		{"reload pause", []string{"reload", "pause"}, tools.ToolReloadControl, map[string]any{"action": "pause"}},
		{"build started", []string{"build", "started", "--owner", "id-owner"}, tools.ToolBuild, map[string]any{"state": "started", "owner": "id-owner"}},
		{"build ok rejected", []string{"build", "ok", "--owner", "id-owner"}, tools.ToolBuild, map[string]any{"state": "ok", "owner": "id-owner"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			// Each side talks to its own agent in the same state: broadcast
			// answers of one would otherwise reach the other's collection.
			a, b := newIdentityAgent(t), newIdentityAgent(t)
			args := map[string]any{"port": strconv.Itoa(b.Port())}
			for k, v := range tc.args {
				args[k] = v
			}
			text, structured, isError := mcpCall(t, tc.tool, args)
			var stdout, stderr bytes.Buffer
			code := run(append(tc.cli, "--port", strconv.Itoa(a.Port())), &stdout, &stderr)
			if !bytes.Equal(structured, []byte(text)) {
				t.Errorf("structuredContent %s differs from the text %s", structured, text)
			}
			// The two agents differ in their port, and each request has its
			// own token; everything else must be equal byte for byte.
			got := normalizeIdentity(strings.TrimSuffix(stdout.String(), "\n"), a.Port())
			text = normalizeIdentity(text, b.Port())
			if got != text {
				t.Errorf("CLI printed\n%s\nMCP text is\n%s", got, text)
			}
			if want := map[bool]ExitCode{false: ExitOK, true: ExitFailure}[isError]; code != want {
				t.Errorf("exit %d for isError=%v (stderr %q)", code, isError, stderr.String())
			}
			if strings.Count(stdout.String(), "\n") != 1 {
				t.Errorf("CLI output is not one line: %q", stdout.String())
			}
		})
	}
}

var requestIDRE = regexp.MustCompile(`"requestId":"[0-9a-f-]{36}"`)

func normalizeIdentity(s string, port int) string {
	s = strings.ReplaceAll(s, ":"+strconv.Itoa(port), ":PORT")
	s = strings.ReplaceAll(s, `"port":`+strconv.Itoa(port), `"port":PORT`)
	return requestIDRE.ReplaceAllString(s, `"requestId":"TOKEN"`)
}

func newIdentityAgent(t *testing.T) *fakeagent.Server {
	a := fakeagent.NewServer(t, fakeagent.WithHeartbeat(-1), fakeagent.WithSessionID("0b6f6d7e-0000-4000-8000-000000000001"),
		fakeagent.WithDoctor(fakeagent.Evidence{PID: "4242", WorkingDirectory: "/srv/app"}))
	a.SetReceipt("com.acme.A", fakeagent.Receipt{SHA256: idSHA, Source: "/p/A.class", Status: "applied", Detail: "Reloaded", CompletedAt: "2026-09-08T09:12:44.371Z"})
	return a
}
