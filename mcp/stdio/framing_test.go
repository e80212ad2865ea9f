package stdio_test

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/buildguard/buildguard/agentproto"
	"github.com/buildguard/buildguard/mcp/stdio"

	"github.com/buildguard/buildguard/harness/mcptest"
	"github.com/buildguard/buildguard/mcp"
)

// serveAll runs a whole session over in and returns stdout.
func serveAll(t *testing.T, in string) string {
	t.Helper()
	var out, logs bytes.Buffer
	srv := mcp.NewServer(mcp.Config{Caller: &mcptest.FakeCaller{}, Logger: mcptest.TestLogger(&logs)})
	if err := srv.ServeStdio(context.Background(), strings.NewReader(in), &out); err != nil {
		t.Fatalf("Serve: %v", err)
	}
	if logs.Len() > 0 {
		t.Errorf("unexpected log output:\n%s", logs.String())
	}
	mcptest.AssertOnlyJSONRPC(t, out.Bytes())
	return out.String()
}

// pingWithPadding is a ping request exactly n UTF-16 units long, padded with
// a string param made of unit (which is 1 or 2 UTF-16 units).
func pingWithPadding(t *testing.T, id string, n int, unit string) string {
	t.Helper()
	prefix := `{"jsonrpc":"2.0","id":` + id + `,"method":"ping","params":{"p":"`
	suffix := `"}}`
	free := n - len(prefix) - len(suffix)
	width := agentproto.UTF16Len(unit)
	if free%width != 0 {
		t.Fatalf("cannot pad to %d units with %q", n, unit)
	}
	return prefix + strings.Repeat(unit, free/width) + suffix
}

func TestFrameLimit(t *testing.T) {
	t.Parallel()
	tooLong := `{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"Request exceeds 65536 characters"}}` + "\n"
	cases := []struct {
		name, in, want string
	}{
		{"exactly 65536 ASCII", pingWithPadding(t, "1", stdio.MaxFrameUnits, "a") + "\n", `{"jsonrpc":"2.0","id":1,"result":{}}` + "\n"},
		{"65537 ASCII", pingWithPadding(t, "1", stdio.MaxFrameUnits+1, "a") + "\n", tooLong},
		{"exactly 65536 units of 3-byte chars", pingWithPadding(t, "1", stdio.MaxFrameUnits, "€") + "\n", `{"jsonrpc":"2.0","id":1,"result":{}}` + "\n"},
		{"65537 units of 3-byte chars", pingWithPadding(t, "1", stdio.MaxFrameUnits+1, "€") + "\n", tooLong},
		{"65538 units of surrogate pairs", pingWithPadding(t, "1", stdio.MaxFrameUnits+2, "😀") + "\n", tooLong},
		{"huge line then ping", strings.Repeat("x", 1<<20) + "\n" + `{"jsonrpc":"2.0","id":2,"method":"ping"}` + "\n", tooLong + `{"jsonrpc":"2.0","id":2,"result":{}}` + "\n"},
		{"CRLF line of 65536 units", pingWithPadding(t, "1", stdio.MaxFrameUnits, "a") + "\r\n", `{"jsonrpc":"2.0","id":1,"result":{}}` + "\n"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := serveAll(t, c.in); got != c.want {
				t.Errorf("got %.200q, want %.200q", got, c.want)
			}
		})
	}
}

func TestLineEndings(t *testing.T) {
	t.Parallel()
	in := "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}\r\n\r\n \t\n{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"ping\"}"
	want := `{"jsonrpc":"2.0","id":1,"result":{}}` + "\n" + `{"jsonrpc":"2.0","id":2,"result":{}}` + "\n"
	if got := serveAll(t, in); got != want {
		t.Errorf("got %q, want %q", got, want)
	}
}

func TestEmptyInputExitsCleanly(t *testing.T) {
	t.Parallel()
	if got := serveAll(t, ""); got != "" {
		t.Errorf("got %q, want no output", got)
	}
}

// TestInvalidUTF8 reads input as UTF-8 text: a byte that is not part of a
// valid sequence is read as U+FFFD, so an echoed id never puts invalid UTF-8
// on stdout.
func TestInvalidUTF8(t *testing.T) {
	t.Parallel()
	in := "{\"jsonrpc\":\"2.0\",\"id\":\"a\xffb\",\"method\":\"ping\"}\n" +
		"{\"jsonrpc\":\"2.0\",\"id\":\"\xc3\",\"method\":\"nope\"}\n" +
		"{\"jsonrpc\":\"2.0\",\"id\":\"\xff\xfe\xef\xbf\xbd\",\"method\":\"ping\",\"params\":1}\n"
	want := `{"jsonrpc":"2.0","id":"a` + "\uFFFD" + `b","result":{}}` + "\n" +
		`{"jsonrpc":"2.0","id":"` + "\uFFFD" + `","error":{"code":-32601,"message":"Method not found: nope"}}` + "\n" +
		`{"jsonrpc":"2.0","id":"` + "\uFFFD\uFFFD\uFFFD" + `","error":{"code":-32602,"message":"params must be an object"}}` + "\n"
	if got := serveAll(t, in); got != want {
		t.Errorf("got %q, want %q", got, want)
	}
}
