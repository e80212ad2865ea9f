//go:build unix

package mcp

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdkmcp "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/buildguard/buildguard/harness/mcptest"
	"github.com/buildguard/buildguard/internal/testsupport/lockedbuf"
	"github.com/buildguard/buildguard/mcp/protocol"
	"github.com/buildguard/buildguard/service/safebuild"
	"github.com/buildguard/buildguard/service/tools"
)

// writeBuildLog makes a project holding one build log of size NUL bytes
// and returns the log's URI.
func writeBuildLog(t *testing.T, size int64) string {
	t.Helper()
	logs := safebuild.LogDir(t.TempDir())
	if err := os.MkdirAll(logs, 0o755); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(logs, "20260101T000000000Z-ok.log")
	if err := os.WriteFile(path, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Truncate(path, size); err != nil {
		t.Fatal(err)
	}
	return tools.LogURI(path)
}

// TestReadLogMemoryBounded: reading back an 8 MiB log of NUL bytes (each
// six bytes in JSON) allocates a bounded amount, client and server
// together, and answers at most safebuild.MaxLogRead bytes of text plus a
// note whose URI reads the next part, which starts where the first ended.
// Not parallel: it counts the process's allocations.
func TestReadLogMemoryBounded(t *testing.T) {
	for _, tc := range []struct {
		transport string
		connect   func(*testing.T, Caller, string, *sdkmcp.ClientOptions) *sdkmcp.ClientSession
	}{{"stdio", connectSDKClientWith}, {"http", connectSDKClientHTTP}} {
		t.Run(tc.transport, func(t *testing.T) {
			readLogMemoryBounded(t, tc.connect(t, nil, protocol.Version20250618, nil))
		})
	}
}

func readLogMemoryBounded(t *testing.T, cs *sdkmcp.ClientSession) {
	const size = 8 << 20
	uri := writeBuildLog(t, size)
	ctx := context.Background()
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	rr, err := cs.ReadResource(ctx, &sdkmcp.ReadResourceParams{URI: uri})
	runtime.ReadMemStats(&after)
	const bound = 64 << 20
	alloc := after.TotalAlloc - before.TotalAlloc
	t.Logf("one read of an 8 MiB NUL log: %.1f MiB allocated", float64(alloc)/(1<<20))
	if alloc > bound {
		t.Errorf("one read allocated %d bytes, more than %d", alloc, bound)
	}
	if err != nil {
		t.Fatal(err)
	}
	if len(rr.Contents) != 2 {
		t.Fatalf("%d contents, want the part and the note of the next", len(rr.Contents))
	}
	enc, _ := json.Marshal(rr.Contents[0].Text)
	text := rr.Contents[0].Text
	if len(enc)-2 > safebuild.MaxLogRead || len(text) == 0 || strings.Trim(text, "\x00") != "" {
		t.Errorf("the part has %d bytes, %d encoded", len(text), len(enc))
	}
	note := rr.Contents[1]
	if note.URI != uri+"?offset="+itoa(len(text)) || !strings.Contains(note.Text, note.URI) {
		t.Fatalf("note %s: %q", note.URI, note.Text)
	}
	next, err := cs.ReadResource(ctx, &sdkmcp.ReadResourceParams{URI: note.URI})
	if err != nil || len(next.Contents) != 2 || next.Contents[0].Text != text || next.Contents[1].URI != uri+"?offset="+itoa(2*len(text)) {
		t.Fatalf("the next part: %v", err)
	}
	for _, bad := range []string{uri + "?offset=" + itoa(size+1), uri + "?offset=-1", uri + "?offset=01", uri + "?from=3"} {
		if _, err := cs.ReadResource(ctx, &sdkmcp.ReadResourceParams{URI: bad}); !isInvalidParams(err) || !strings.Contains(err.Error(), "offset") {
			t.Errorf("resources/read of %s: %v, want -32602 about the offset", bad, err)
		}
	}
}

// TestReadLogReadsAtOnce: while MaxLogReads reads of build logs run, one
// more waits a bounded time for its turn and then is -32000, to retry; it
// is served once a turn is free.
func TestReadLogReadsAtOnce(t *testing.T) {
	t.Parallel()
	uri := writeBuildLog(t, 100)
	logs := &lockedbuf.Buffer{}
	srv := NewServer(Config{Version: "test", Logger: mcptest.TestLogger(logs)})
	srv.logReadWait = 10 * time.Millisecond
	cs := serveSDKClient(t, srv, logs, protocol.Version20250618, nil)
	for range MaxLogReads {
		srv.logReads <- struct{}{} // reads running
	}
	_, err := cs.ReadResource(context.Background(), &sdkmcp.ReadResourceParams{URI: uri})
	var rpcErr *jsonrpc.Error
	if !errors.As(err, &rpcErr) || rpcErr.Code != codeBusy || rpcErr.Message != msgLogReadsBusy {
		t.Errorf("a read beyond %d at once: %v, want %d %q", MaxLogReads, err, codeBusy, msgLogReadsBusy)
	}
	<-srv.logReads // one ends
	if rr, err := cs.ReadResource(context.Background(), &sdkmcp.ReadResourceParams{URI: uri}); err != nil || len(rr.Contents[0].Text) != 100 {
		t.Errorf("a read with a turn free: %v", err)
	}
}

func itoa(n int) string { return strconv.Itoa(n) }

// TestReadLogCacheHintsOnlyIn20260728: a resources/read answer carries the
// ttlMs and cacheScope cache hints in a 2026-07-28 request and in no
// session before (docs/mcp-server.md#2.3).
func TestReadLogCacheHintsOnlyIn20260728(t *testing.T) {
	t.Parallel()
	uri := writeBuildLog(t, 10)
	uriJSON, _ := json.Marshal(uri)
	meta := `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}`
	in := `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18"}}
{"jsonrpc":"2.0","method":"notifications/initialized"}
{"jsonrpc":"2.0","id":1,"method":"resources/read","params":{"uri":` + string(uriJSON) + `}}
{"jsonrpc":"2.0","id":2,"method":"resources/read","params":{"uri":` + string(uriJSON) + `,` + meta + `}}
`
	var out, logs bytes.Buffer
	srv := NewServer(Config{Version: "test", Logger: mcptest.TestLogger(&logs)})
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if err := srv.ServeStdio(ctx, strings.NewReader(in), &out); err != nil {
		t.Fatal(err)
	}
	results := map[float64]map[string]json.RawMessage{}
	for line := range strings.SplitSeq(strings.TrimSpace(out.String()), "\n") {
		var resp struct {
			ID     float64                    `json:"id"`
			Result map[string]json.RawMessage `json:"result"`
		}
		if err := json.Unmarshal([]byte(line), &resp); err != nil {
			t.Fatalf("%v: %s", err, line)
		}
		results[resp.ID] = resp.Result
	}
	for id, want := range map[float64]bool{1: false, 2: true} {
		r := results[id]
		_, ttl := r["ttlMs"]
		_, scope := r["cacheScope"]
		if r["contents"] == nil || ttl != want || scope != want {
			t.Errorf("read %v: ttlMs %v, cacheScope %v, want %v: %s", id, ttl, scope, want, out.String())
		}
	}
}
