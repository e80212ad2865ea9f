package stdio_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/buildguard/buildguard/harness/fakeagent"
	"github.com/buildguard/buildguard/mcp"
	"github.com/buildguard/buildguard/service/tools"
)

// TestRealBatchCancel: a real verify_batch waiting (timeoutMs 60000) for a
// receipt the agent never sends is cancelled by notifications/cancelled: no
// answer is ever written, and the slot frees long before the 60 s budget, so
// the cancellation reached the agent exchange itself.
func TestRealBatchCancel(t *testing.T) {
	t.Parallel()
	agent := fakeagent.NewServer(t, fakeagent.WithReply(func(r *fakeagent.Reply) {
		if r.Kind == fakeagent.KindVerify {
			fakeagent.DropReply(r)
		}
	}))
	s := startSession(t, tools.NewService(tools.Deps{Base: agent.Dir()}), time.Second)
	s.Send(`{"jsonrpc":"2.0","id":"batch","method":"tools/call","params":{"name":"reclazz_verify_batch","arguments":{"timeoutMs":"60000","items":[{"className":"app.Main","sha256":"` + sha + `"}]}}}`)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if _, err := agent.WaitCommand(ctx, "VERIFY "); err != nil {
		t.Fatalf("the batch never sent VERIFY: %v", err)
	}
	s.Send(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"batch"}}`)
	for i := 0; ; i++ {
		s.Send(fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"reclazz_status"}}`, i))
		got := s.Recv()
		if field(t, got, "id") != fmt.Sprint(i) {
			t.Fatalf("unexpected answer %s", got)
		}
		if !strings.Contains(got, "-32000") {
			break
		}
		if ctx.Err() != nil {
			t.Fatal("the batch slot stayed busy 10 s after cancellation")
		}
		time.Sleep(5 * time.Millisecond)
	}
	if rest := s.CloseAndRest(); len(rest) != 0 {
		t.Errorf("cancelled batch answered: %q", rest)
	}
}

// TestRealInvalidBatchIsAnsweredInOrder sends invalid verification batches
// with the real *tools.Service, each followed by a request that a busy batch
// slot would refuse, and closes stdin at once: every batch is answered with
// its -32602, and nothing is refused or suppressed.
func TestRealInvalidBatchIsAnsweredInOrder(t *testing.T) {
	t.Parallel()
	var in strings.Builder
	bad := []string{
		`{"items":[]}`,
		`{"items":[{"className":"a.B","sha256":"` + sha + `","extra":1}]}`,
		`{"items":[{"className":"a.B","sha256":"` + sha + `"},{"className":"a.B","sha256":"` + sha + `"}]}`,
		`{}`,
		`{"timeoutMs":"0","items":[{"className":"a.B","sha256":"` + sha + `"}]}`,
	}
	var want strings.Builder
	for i, args := range bad {
		fmt.Fprintf(&in, `{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"reclazz_verify_batch","arguments":%s}}`+"\n", 2*i, args)
		fmt.Fprintf(&in, `{"jsonrpc":"2.0","id":%d,"method":"completion/complete"}`+"\n", 2*i+1)
		msg := "items must contain 1–32 unique className/lower-case sha256 pairs, with no extra fields"
		if strings.Contains(args, "timeoutMs") {
			msg = "timeoutMs must be an integer string between 1 and 60000"
		}
		fmt.Fprintf(&want, `{"jsonrpc":"2.0","id":%d,"error":{"code":-32602,"message":%q}}`+"\n", 2*i, msg)
		fmt.Fprintf(&want, `{"jsonrpc":"2.0","id":%d,"error":{"code":-32601,"message":"Method not found: completion/complete"}}`+"\n", 2*i+1)
	}
	var out strings.Builder
	srv := mcp.NewServer(mcp.Config{Caller: tools.NewService(tools.Deps{Base: t.TempDir()})})
	if err := srv.ServeStdio(context.Background(), strings.NewReader(in.String()), &out); err != nil {
		t.Fatalf("Serve: %v", err)
	}
	if out.String() != want.String() {
		t.Errorf("got\n%s\nwant\n%s", out.String(), want.String())
	}
}
