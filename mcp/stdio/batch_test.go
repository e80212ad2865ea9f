package stdio_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/buildguard/buildguard/harness/mcptest"
	"github.com/buildguard/buildguard/internal/testsupport/wait"
	"github.com/buildguard/buildguard/service/tools"
)

var appliedBatch = tools.Result{Data: json.RawMessage(`{"status":"applied","allApplied":true}`), LegacyText: "applied"}

func TestBatchAnswersWhenDoneAndFreesTheSlot(t *testing.T) {
	t.Parallel()
	f := &mcptest.FakeCaller{Release: make(chan tools.Result), Started: make(chan string, 4)}
	s := startSession(t, f, time.Second)
	s.Send(initLine)
	s.Recv()
	s.Send(fmt.Sprintf(batchCall, "1"))
	f.AwaitStart(t)
	s.Send(fmt.Sprintf(pingLine, "2"))
	if got := s.Recv(); got != `{"jsonrpc":"2.0","id":2,"result":{}}` {
		t.Fatalf("ping during batch: %s", got)
	}
	f.Release <- appliedBatch
	got := s.Recv()
	if field(t, got, "id") != "1" || !strings.Contains(got, `"structuredContent":{"status":"applied","allApplied":true}`) {
		t.Fatalf("batch answer: %s", got)
	}
	s.Send(`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"reclazz_status"}}`)
	f.AwaitStart(t)
	if got := s.Recv(); field(t, got, "id") != "3" || field(t, got, "error") != "" {
		t.Fatalf("call after the batch: %s", got)
	}
	if rest := s.CloseAndRest(); len(rest) != 0 {
		t.Errorf("unexpected output after EOF: %q", rest)
	}
}

func TestBatchCancelSuppressesTheAnswer(t *testing.T) {
	t.Parallel()
	f := &mcptest.FakeCaller{Started: make(chan string, 1)}
	s := startSession(t, f, time.Second)
	s.Send(fmt.Sprintf(batchCall, `"b"`))
	f.AwaitStart(t)
	s.Send(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"b","reason":"stop"}}`)
	s.Send(fmt.Sprintf(pingLine, "2"))
	if got := s.Recv(); got != `{"jsonrpc":"2.0","id":2,"result":{}}` {
		t.Fatalf("got %s, want only the ping answer", got)
	}
	// The slot frees once the tool returned; a later batch is then accepted.
	wait.Until(10*time.Second, func() bool { return f.CancelledCount() != 0 })
	if f.CancelledCount() != 1 {
		t.Fatal("the tool never saw its context cancelled")
	}
	if rest := s.CloseAndRest(); len(rest) != 0 {
		t.Errorf("cancelled batch answered: %q", rest)
	}
}

// TestBatchCancelRacesCompletion releases the batch and cancels it at the same
// time, many times: the batch id is answered at most once, and the session
// keeps working.
func TestBatchCancelRacesCompletion(t *testing.T) {
	t.Parallel()
	for i := 0; i < 100; i++ {
		f := &mcptest.FakeCaller{Release: make(chan tools.Result, 1), Started: make(chan string, 2)}
		s := startSession(t, f, time.Second)
		s.Send(fmt.Sprintf(batchCall, "7"))
		if i%2 == 0 {
			f.AwaitStart(t) // else: cancel may even beat the tool's start
		}
		var wg sync.WaitGroup
		wg.Add(2)
		go func() { defer wg.Done(); f.Release <- appliedBatch }()
		go func() {
			defer wg.Done()
			s.Send(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":7.0}}`)
		}()
		wg.Wait()
		s.Send(fmt.Sprintf(pingLine, "8"))
		lines := s.CloseAndRest()
		var batch, ping int
		for _, l := range lines {
			switch field(t, l, "id") {
			case "7":
				batch++
				if !strings.Contains(l, `"text":"applied"`) { // legacy shape: no initialize
					t.Errorf("batch answer is not the tool's result: %s", l)
				}
			case "8":
				ping++
			default:
				t.Errorf("unexpected line %s", l)
			}
		}
		if batch > 1 || ping != 1 && !strings.Contains(strings.Join(lines, ""), "-32000") {
			t.Fatalf("iteration %d: %d batch answers, %d ping answers: %q", i, batch, ping, lines)
		}
	}
}

func TestSameIDAsActiveBatchIsRefused(t *testing.T) {
	t.Parallel()
	f := &mcptest.FakeCaller{Started: make(chan string, 1)}
	s := startSession(t, f, time.Second)
	s.Send(fmt.Sprintf(batchCall, "5"))
	f.AwaitStart(t)
	for _, id := range []string{"5", "5.0", "50e-1"} {
		s.Send(fmt.Sprintf(pingLine, id))
		want := `{"jsonrpc":"2.0","id":` + id + `,"error":{"code":-32600,"message":"Request ID is already active"}}`
		if got := s.Recv(); got != want {
			t.Errorf("got %s, want %s", got, want)
		}
	}
	// A cancellation in progress still holds the id and the slot.
	s.Send(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":5}}`)
	if rest := s.CloseAndRest(); len(rest) != 0 {
		t.Errorf("unexpected output: %q", rest)
	}
}

func TestEOFCancelsTheBatch(t *testing.T) {
	t.Parallel()
	f := &mcptest.FakeCaller{Started: make(chan string, 1)}
	s := startSession(t, f, 5*time.Second)
	s.Send(fmt.Sprintf(batchCall, "1"))
	f.AwaitStart(t)
	if rest := s.CloseAndRest(); len(rest) != 0 {
		t.Errorf("batch answered after EOF: %q", rest)
	}
	if f.CancelledCount() != 1 {
		t.Errorf("the batch's context was not cancelled at EOF")
	}
}

// TestEOFWaitIsBounded: a tool that ignores cancellation cannot keep the
// server from exiting after DrainTimeout, and that wait is the only one
// (docs/mcp-server.md#2.1: up to 2 s, then exit 0): once it has expired, the server does not
// wait a second time for the same handler.
func TestEOFWaitIsBounded(t *testing.T) {
	t.Parallel()
	f := &mcptest.FakeCaller{Deaf: make(chan struct{}), Started: make(chan string, 1)}
	defer close(f.Deaf)
	s := startSession(t, f, 20*time.Millisecond)
	s.Send(fmt.Sprintf(batchCall, "1"))
	f.AwaitStart(t)
	if rest := s.CloseAndRest(); len(rest) != 0 {
		t.Errorf("batch answered after EOF: %q", rest)
	}
	logs := s.Logs.String()
	if !strings.Contains(logs, "batch did not finish after cancellation") {
		t.Errorf("the bounded wait was not logged: %s", logs)
	}
	if strings.Contains(logs, "exiting with a tool call still running") {
		t.Errorf("waited a second time after the drain expired: %s", logs)
	}
}

func TestBatchPanicIsBatchProcessingFailed(t *testing.T) {
	t.Parallel()
	s := startSession(t, &mcptest.FakeCaller{}, time.Second)
	s.Send(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"reclazz_verify_batch","arguments":{"mode":"panic"}}}`)
	want := `{"jsonrpc":"2.0","id":1,"error":{"code":-32603,"message":"Batch processing failed"}}`
	if got := s.Recv(); got != want {
		t.Fatalf("got %s, want %s", got, want)
	}
	s.Send(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"reclazz_status"}}`)
	if got := s.Recv(); field(t, got, "error") != "" {
		t.Fatalf("slot not released after the panic: %s", got)
	}
	if !strings.Contains(s.Logs.String(), "fake caller panicked") {
		t.Errorf("panic not logged: %s", s.Logs.String())
	}
}
