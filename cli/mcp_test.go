package cli

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/buildguard/buildguard/harness/fakeagent"
)

// failReader fails the test when read: parse failures and --help must not
// touch stdin.
type failReader struct{ t *testing.T }

func (r failReader) Read([]byte) (int, error) {
	r.t.Error("stdin was read")
	return 0, fmt.Errorf("stdin must not be read")
}

func TestMCPHelp(t *testing.T) {
	var stdout, stderr bytes.Buffer
	if code := runMCP([]string{"--help"}, failReader{t}, &stdout, &stderr); code != ExitOK {
		t.Errorf("exit %d, want 0", code)
	}
	if stdout.Len() != 0 || stderr.String() != mcpUsage {
		t.Errorf("stdout %q, stderr %q", stdout.String(), stderr.String())
	}
}

func TestMCPStartupFailures(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "file")
	if err := os.WriteFile(file, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		args   []string
		reason string
	}{
		{[]string{"--help", "--port-file", "x"}, "Unknown MCP startup option"},
		{[]string{"--port-file", "x", "--help"}, "Unknown MCP startup option"},
		{[]string{"--verbose"}, "Unknown MCP startup option"},
		{[]string{"x"}, "Unknown MCP startup option"},
		{[]string{"--port-file"}, "Duplicate option or missing value: --port-file"},
		{[]string{"--project-dir", dir, "--project-dir", dir}, "Duplicate option or missing value: --project-dir"},
		{[]string{"--port-file", "--project-dir", "."}, "Duplicate option or missing value: --port-file"},
		{[]string{"--port-file", " "}, "Path must be nonblank, at most 4096 characters and contain no control characters"},
		{[]string{"--port-file", ""}, "Path must be nonblank, at most 4096 characters and contain no control characters"},
		{[]string{"--project-dir", "a\nb"}, "Path must be nonblank, at most 4096 characters and contain no control characters"},
		{[]string{"--port-file", "a\u0085b"}, "Path must be nonblank, at most 4096 characters and contain no control characters"},
		{[]string{"--port-file", strings.Repeat("a", 4097)}, "Path must be nonblank, at most 4096 characters and contain no control characters"},
		{[]string{"--port-file", strings.Repeat("😀", 2049)}, "Path must be nonblank, at most 4096 characters and contain no control characters"},
		{[]string{"--project-dir", filepath.Join(dir, "missing")}, "projectDir must name an existing directory"},
		{[]string{"--project-dir", file}, "projectDir must name an existing directory"},
		// A no-break space is not blank to Java's isBlank: the path is
		// checked, and does not exist.
		{[]string{"--project-dir", "\u00a0"}, "projectDir must name an existing directory"},
	}
	for _, c := range cases {
		var stdout, stderr bytes.Buffer
		code := runMCP(c.args, failReader{t}, &stdout, &stderr)
		want := c.reason + "\n" + mcpUsage
		if code != ExitUsage || stdout.Len() != 0 || stderr.String() != want {
			t.Errorf("%q: exit %d, stdout %q, stderr %q; want exit 2 and %q", c.args, code, stdout.String(), stderr.String(), want)
		}
	}
}

func TestMCPPathResolution(t *testing.T) {
	wd := t.TempDir()
	real := filepath.Join(wd, "real")
	if err := os.Mkdir(real, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(real, filepath.Join(wd, "link")); err != nil {
		t.Fatal(err)
	}
	realWD, _ := filepath.EvalSymlinks(wd)
	realProject := filepath.Join(realWD, "real")

	cfg, err := parseMCPArgs([]string{"--port-file", "p/../agent.port", "--project-dir", "link"}, wd)
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Base != realProject || !cfg.ProjectSelected || cfg.StartupPortFile != filepath.Join(realProject, "agent.port") {
		t.Errorf("with project: %+v", cfg)
	}
	cfg, err = parseMCPArgs([]string{"--port-file", "missing/agent.port"}, wd)
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Base != wd || cfg.ProjectSelected || cfg.StartupPortFile != filepath.Join(wd, "missing", "agent.port") {
		t.Errorf("without project: %+v", cfg)
	}
	cfg, err = parseMCPArgs([]string{"--port-file", "/x/./y/../agent.port"}, wd)
	if err != nil || cfg.StartupPortFile != "/x/agent.port" {
		t.Errorf("absolute port file: %+v, %v", cfg, err)
	}
	cfg, err = parseMCPArgs(nil, wd)
	if err != nil || cfg.Base != wd || cfg.ProjectSelected || cfg.StartupPortFile != "" {
		t.Errorf("no options: %+v, %v", cfg, err)
	}
}

// TestMCPSession runs a whole stdio session with the real tools against the
// fake agent: stdout carries nothing but the JSON-RPC answers, stderr
// nothing at all, and stdin EOF exits 0.
func TestMCPSession(t *testing.T) {
	t.Setenv("BUILDGUARD_LOG_LEVEL", "")
	agent := fakeagent.NewServer(t)
	in := strings.Join([]string{
		`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18"}}`,
		`{"jsonrpc":"2.0","method":"notifications/initialized"}`,
		`{"jsonrpc":"2.0","id":2,"method":"ping"}`,
		fmt.Sprintf(`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"reclazz_status","arguments":{"portFile":%q}}}`, agent.PortFile()),
		`{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"reclazz_status","arguments":{"timeoutMs":"0"}}}`,
	}, "\n") + "\n"
	var stdout, stderr bytes.Buffer
	if code := runMCP(nil, strings.NewReader(in), &stdout, &stderr); code != ExitOK {
		t.Errorf("exit %d, want 0", code)
	}
	if stderr.Len() != 0 {
		t.Errorf("stderr in a normal session: %q", stderr.String())
	}
	lines := strings.Split(strings.TrimSuffix(stdout.String(), "\n"), "\n")
	if len(lines) != 4 {
		t.Fatalf("want 4 answers, got %q", stdout.String())
	}
	for i, l := range lines {
		var m map[string]json.RawMessage
		if err := json.Unmarshal([]byte(l), &m); err != nil || string(m["jsonrpc"]) != `"2.0"` || string(m["id"]) != fmt.Sprint(i+1) {
			t.Errorf("line %d is not the JSON-RPC answer to id %d: %s", i, i+1, l)
		}
	}
	if !strings.Contains(lines[0], `"serverInfo":{"name":"buildguard","version":"`+version()+`"}`) {
		t.Errorf("initialize: %s", lines[0])
	}
	if !strings.Contains(lines[2], `"structuredContent":{"attached":true`) {
		t.Errorf("status against the fake agent: %s", lines[2])
	}
	if !strings.Contains(lines[3], `"code":-32602`) {
		t.Errorf("timeoutMs 0 must be -32602 at 2025-06-18: %s", lines[3])
	}
	if got := agent.Commands(); len(got) != 1 || got[0] != "HEALTH" {
		t.Errorf("agent saw %q, want one HEALTH", got)
	}
}

// TestMCPLogging: BUILDGUARD_LOG_LEVEL and BUILDGUARD_LOG_FORMAT=json (docs/decisions.md#D9)
// put JSON log lines on stderr, never on stdout.
func TestMCPLogging(t *testing.T) {
	t.Setenv("BUILDGUARD_LOG_LEVEL", "debug")
	t.Setenv("BUILDGUARD_LOG_FORMAT", "json")
	in := `{"jsonrpc":"2.0","id":1,"method":"ping"}` + "\n"
	var stdout, stderr bytes.Buffer
	if code := runMCP(nil, strings.NewReader(in), &stdout, &stderr); code != ExitOK {
		t.Errorf("exit %d", code)
	}
	if stdout.String() != `{"jsonrpc":"2.0","id":1,"result":{}}`+"\n" {
		t.Errorf("stdout %q", stdout.String())
	}
	lines := strings.Split(strings.TrimSpace(stderr.String()), "\n")
	if stderr.Len() == 0 {
		t.Fatal("no debug log on stderr")
	}
	for _, l := range lines {
		var m map[string]any
		if err := json.Unmarshal([]byte(l), &m); err != nil || m["@level"] == nil {
			t.Errorf("not a JSON log line: %q", l)
		}
	}
}

// TestMCPWordsEveryStartFileRefusal: every refusal mcp.Serve ends with — a
// token file unreadable, shared or malformed, a URL file's path that
// cannot be looked at or is no file of its own — is worded in the flag
// that named the file, with the rule it breaks, then what was found, then
// the usage, exit 2 (docs/decisions.md#D14, docs/decisions.md#D23).
func TestMCPWordsEveryStartFileRefusal(t *testing.T) {
	dir := t.TempDir()
	write := func(name, content string, mode os.FileMode) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(content), mode); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(p, mode); err != nil {
			t.Fatal(err)
		}
		return p
	}
	token, short, shared := write("token", "file-token-0123456789\n", 0o600), write("short", "short\n", 0o600), write("shared", "file-token-0123456789\n", 0o644)
	missing, underFile := filepath.Join(dir, "missing"), filepath.Join(token, "url")
	const form = "--token-file must hold one token of 16 to 4096 printable ASCII characters without spaces: "
	const own = "--url-file must name a regular file or a new file: "
	cases := map[string]struct {
		args []string
		want string
	}{
		"no token file":      {[]string{"--token-file", missing}, form + "cannot read " + missing + ": open " + missing + ": "},
		"a malformed token":  {[]string{"--token-file", short}, form + short + "\n"},
		"a URL file's place": {[]string{"--token-file", token, "--url-file", dir}, own + dir + " is a directory\n"},
	}
	if runtime.GOOS != "windows" {
		cases["a shared token file"] = struct {
			args []string
			want string
		}{[]string{"--token-file", shared}, "--token-file must be readable by its owner only: " + shared + " has mode 0644, open to its group or others; chmod 600 " + shared + "\n"}
		cases["a URL file under a file"] = struct {
			args []string
			want string
		}{[]string{"--url-file", underFile}, own + "lstat " + underFile + ": not a directory\n"}
	}
	for name, tc := range cases {
		var stdout, stderr bytes.Buffer
		code := runMCP(append([]string{"--http", "127.0.0.1:0"}, tc.args...), failReader{t}, &stdout, &stderr)
		if code != ExitUsage || stdout.Len() != 0 || !strings.HasPrefix(stderr.String(), tc.want) || !strings.HasSuffix(stderr.String(), "\n"+mcpUsage) {
			t.Errorf("%s: exit %d, stdout %q, stderr %q; want exit 2 and stderr starting %q, ending with the usage", name, code, stdout.String(), stderr.String(), tc.want)
		}
	}
}
