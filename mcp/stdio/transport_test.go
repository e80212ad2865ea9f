package stdio

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"io"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdkmcp "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/buildguard/buildguard/internal/testsupport/lockedbuf"
	"github.com/buildguard/buildguard/internal/testsupport/wait"
	"github.com/buildguard/buildguard/mcp/protocol"
)

// These tests drive the transport as the SDK does: Read what it hands over,
// Write the answers, and watch what reaches Out.

const testWait = 10 * time.Second

type rig struct {
	t    *testing.T
	in   *io.PipeWriter
	out  *lockedbuf.Buffer
	tr   *Transport
	conn *conn
}

func newRig(t *testing.T, configure func(*Transport)) *rig {
	t.Helper()
	pr, pw := io.Pipe()
	out := &lockedbuf.Buffer{}
	tr := &Transport{In: pr, Out: out}
	if configure != nil {
		configure(tr)
	}
	c, err := tr.Connect(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	r := &rig{t: t, in: pw, out: out, tr: tr, conn: c.(*conn)}
	t.Cleanup(func() {
		_ = pw.Close()
		_ = c.Close()
	})
	return r
}

// send writes lines to the transport's input from a goroutine, so that a
// reader that waits for an answer before it reads on cannot block the test.
func (r *rig) send(lines ...string) {
	go func() {
		for _, l := range lines {
			if _, err := io.WriteString(r.in, l+"\n"); err != nil {
				return
			}
		}
	}()
}

// read is the SDK's next Read, bounded by d.
func (r *rig) read(d time.Duration) (jsonrpc.Message, error) {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	defer cancel()
	return r.conn.Read(ctx)
}

// request is the next message handed to the SDK, which must be a request.
func (r *rig) request() *jsonrpc.Request {
	r.t.Helper()
	m, err := r.read(testWait)
	if err != nil {
		r.t.Fatalf("waiting %v for the transport to hand over a message: %v", testWait, err)
	}
	req, ok := m.(*jsonrpc.Request)
	if !ok {
		r.t.Fatalf("handed over %T, want a request", m)
	}
	return req
}

// answer writes the SDK's result for req.
func (r *rig) answer(req *jsonrpc.Request, result string) {
	r.t.Helper()
	if err := r.conn.Write(context.Background(), &jsonrpc.Response{ID: req.ID, Result: json.RawMessage(result)}); err != nil {
		r.t.Fatalf("answering %s: %v", req.Method, err)
	}
}

// lines waits until Out holds n lines and returns them.
func (r *rig) lines(n int) []string {
	r.t.Helper()
	var got []string
	wait.For(r.t, testWait, "the transport's answers on Out", func() bool {
		got = strings.Split(strings.TrimSuffix(r.out.String(), "\n"), "\n")
		return r.out.String() != "" && len(got) >= n
	})
	return got
}

func callLine(id, tool string) string {
	return `{"jsonrpc":"2.0","id":` + id + `,"method":"tools/call","params":{"name":"` + tool + `","arguments":{}}}`
}

// cancelTarget is the token a notifications/cancelled handed to the SDK names.
func cancelTarget(t *testing.T, req *jsonrpc.Request) string {
	t.Helper()
	if req.Method != protocol.MethodCancelled || req.IsCall() {
		t.Fatalf("handed over %s (call %v), want the notifications/cancelled the SDK acts on", req.Method, req.IsCall())
	}
	var p struct {
		RequestID string `json:"requestId"`
	}
	if err := json.Unmarshal(req.Params, &p); err != nil {
		t.Fatalf("cancellation params %s: %v", req.Params, err)
	}
	return p.RequestID
}

func TestReadFrameCountsUTF16UnitsWithoutTheLineEnd(t *testing.T) {
	emoji := "\U0001F600" // two UTF-16 units, four bytes
	cases := []struct {
		name    string
		input   string
		line    string
		tooLong bool
		err     error
	}{
		{"exactly the limit", strings.Repeat("a", MaxFrameUnits) + "\n", strings.Repeat("a", MaxFrameUnits), false, nil},
		{"the limit with CRLF", strings.Repeat("a", MaxFrameUnits) + "\r\n", strings.Repeat("a", MaxFrameUnits) + "\r", false, nil},
		{"one unit over", strings.Repeat("a", MaxFrameUnits+1) + "\n", "", true, nil},
		{"a non-BMP char counts two", strings.Repeat("a", MaxFrameUnits-1) + emoji + "\n", "", true, nil},
		{"multi-byte BMP chars count one each", strings.Repeat("é", MaxFrameUnits) + "\n", strings.Repeat("é", MaxFrameUnits), false, nil},
		{"far over the byte bound", strings.Repeat("a", 4*MaxFrameUnits) + "\n", "", true, nil},
		{"last line without newline", `{"a":1}`, `{"a":1}`, false, io.EOF},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			br := bufio.NewReaderSize(strings.NewReader(tc.input+"next\n"), 64<<10)
			if tc.err != nil {
				br = bufio.NewReaderSize(strings.NewReader(tc.input), 64<<10)
			}
			line, tooLong, err := readFrame(br)
			if string(line) != tc.line || tooLong != tc.tooLong || !errors.Is(err, tc.err) && err != tc.err {
				t.Fatalf("readFrame = %d bytes, tooLong %v, err %v; want %d bytes, tooLong %v, err %v", len(line), tooLong, err, len(tc.line), tc.tooLong, tc.err)
			}
			if tc.err == nil {
				next, _, _ := readFrame(br)
				if string(next) != "next" {
					t.Fatalf("the line after it reads %q, want %q: a long line must be consumed to its end and no further", next, "next")
				}
			}
		})
	}
}

func TestTooLongLineIsAnsweredAndReadingGoesOn(t *testing.T) {
	r := newRig(t, nil)
	r.send(strings.Repeat("x", MaxFrameUnits+1), `{"jsonrpc":"2.0","id":7,"method":"ping"}`)
	req := r.request()
	if req.Method != protocol.MethodPing {
		t.Fatalf("handed over %s, want ping", req.Method)
	}
	r.answer(req, `{}`)
	got := r.lines(2)
	want := []string{
		`{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"` + msgFrameTooLarge + `"}}`,
		`{"jsonrpc":"2.0","id":7,"result":{}}`,
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("Out:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// A request is handed to the SDK only after the one before it was answered,
// and each answer carries its own request's id literal.
func TestRequestsReachTheSDKOneAtATimeInOrder(t *testing.T) {
	r := newRig(t, nil)
	r.send(`{"jsonrpc":"2.0","id":"first","method":"ping"}`, `{"jsonrpc":"2.0","id":20,"method":"tools/list"}`)
	first := r.request()
	if first.Method != protocol.MethodPing {
		t.Fatalf("first handed over %s, want ping", first.Method)
	}
	if m, err := r.read(200 * time.Millisecond); err == nil || r.out.String() != "" {
		t.Fatalf("before the first request was answered, the second was handed over (%v) or answered (%q)", m, r.out.String())
	}
	r.answer(first, `{}`)
	second := r.request()
	if second.Method != protocol.MethodToolsList {
		t.Fatalf("second handed over %s, want tools/list", second.Method)
	}
	r.answer(second, `{"tools":[]}`)
	got := strings.Join(r.lines(2), "\n")
	want := `{"jsonrpc":"2.0","id":"first","result":{}}` + "\n" + `{"jsonrpc":"2.0","id":20,"result":{"tools":[]}}`
	if got != want {
		t.Fatalf("Out:\n%s\nwant:\n%s", got, want)
	}
}

// A cancellation reaches only the build call it names: the other build and
// its answer are untouched, and the cancelled call's answer is suppressed.
func TestCancelReachesOnlyTheBuildItNames(t *testing.T) {
	r := newRig(t, func(tr *Transport) { tr.BuildTool = "build" })
	r.send(callLine("1", "build"))
	one := r.request()
	r.send(callLine("2", "build"))
	two := r.request()
	r.send(`{"jsonrpc":"2.0","id":3,"method":"ping"}`)
	ping := r.request()
	if ping.Method != protocol.MethodPing {
		t.Fatalf("while two builds run, handed over %s, want the ping served beside them", ping.Method)
	}
	r.answer(ping, `{}`)

	r.send(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":1,"reason":"user"}}`)
	if target := cancelTarget(t, r.request()); target != one.ID.Raw() {
		t.Fatalf("the cancellation of id 1 names %q, want build call 1's token %q (build call 2 is %q)", target, one.ID.Raw(), two.ID.Raw())
	}
	// A second cancel of the same id and one of an unknown id change nothing.
	r.send(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":1}}`,
		`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":99}}`,
		`{"jsonrpc":"2.0","id":4,"method":"ping"}`)
	if next := r.request(); next.Method != protocol.MethodPing {
		t.Fatalf("after a repeated and an unknown cancel, handed over %s, want only the next ping", next.Method)
	} else {
		r.answer(next, `{}`)
	}
	r.answer(one, `{"cancelled":"late"}`)
	r.answer(two, `{"ok":2}`)
	got := strings.Join(r.lines(3), "\n")
	want := strings.Join([]string{
		`{"jsonrpc":"2.0","id":3,"result":{}}`,
		`{"jsonrpc":"2.0","id":4,"result":{}}`,
		`{"jsonrpc":"2.0","id":2,"result":{"ok":2}}`,
	}, "\n")
	if got != want {
		t.Fatalf("Out:\n%s\nwant (build 1's answer suppressed):\n%s", got, want)
	}
}

// An id still in use by a running build is refused; the build goes on.
func TestIDOfARunningBuildIsRefused(t *testing.T) {
	r := newRig(t, func(tr *Transport) { tr.BuildTool = "build" })
	r.send(callLine(`"b"`, "build"))
	build := r.request()
	r.send(`{"jsonrpc":"2.0","id":"b","method":"ping"}`)
	got := r.lines(1)
	if want := `{"jsonrpc":"2.0","id":"b","error":{"code":-32600,"message":"` + msgIDActive + `"}}`; got[0] != want {
		t.Fatalf("Out: %s\nwant: %s", got[0], want)
	}
	r.answer(build, `{"done":true}`)
	if got := r.lines(2); got[1] != `{"jsonrpc":"2.0","id":"b","result":{"done":true}}` {
		t.Fatalf("the build's answer: %s", got[1])
	}
}

// At EOF a running build is cancelled and waited for at most its drain
// timeout; only then does Read report EOF, and DrainExpired says the wait
// ran out. Nothing is written for the cancelled call.
func TestEOFCancelsTheBuildAndBoundsTheWait(t *testing.T) {
	r := newRig(t, func(tr *Transport) {
		tr.BuildTool = "build"
		tr.BuildDrainTimeout = 100 * time.Millisecond
	})
	r.send(callLine("1", "build"))
	build := r.request()
	_ = r.in.Close()
	if target := cancelTarget(t, r.request()); target != build.ID.Raw() {
		t.Fatalf("at EOF the cancellation names %q, want the build's token %q", target, build.ID.Raw())
	}
	if _, err := r.read(testWait); !errors.Is(err, io.EOF) {
		t.Fatalf("Read after the drain: %v, want io.EOF", err)
	}
	select {
	case <-r.tr.Ended():
	default:
		t.Fatal("Ended is not closed after Read reported EOF")
	}
	if !r.tr.DrainExpired() {
		t.Fatal("DrainExpired is false although the build never answered")
	}
	r.answer(build, `{"late":true}`)
	if s := r.out.String(); s != "" {
		t.Fatalf("Out holds %q; the cancelled build's answer must be suppressed", s)
	}
}

// A build that answers its cancellation in time ends the drain at once.
func TestEOFDrainEndsWhenTheBuildAnswers(t *testing.T) {
	r := newRig(t, func(tr *Transport) {
		tr.BuildTool = "build"
		tr.BuildDrainTimeout = time.Hour
	})
	r.send(callLine("1", "build"))
	build := r.request()
	_ = r.in.Close()
	cancelTarget(t, r.request())
	r.answer(build, `{}`)
	if _, err := r.read(testWait); !errors.Is(err, io.EOF) {
		t.Fatalf("Read after the build answered: %v, want io.EOF well before the hour-long drain", err)
	}
	if r.tr.DrainExpired() {
		t.Fatal("DrainExpired is true although the build answered its cancellation")
	}
}

// Of the server's own messages only progress notifications reach Out.
func TestOnlyProgressOfServerMessagesReachesOut(t *testing.T) {
	r := newRig(t, nil)
	logMsg := &jsonrpc.Request{Method: "notifications/message", Params: json.RawMessage(`{"level":"info","data":"x"}`)}
	progress := &jsonrpc.Request{Method: protocol.MethodProgress, Params: json.RawMessage(`{"progressToken":"p","progress":1,"message":"compiling"}`)}
	id, _ := jsonrpc.MakeID("no-such-call")
	for _, m := range []jsonrpc.Message{logMsg, progress, &jsonrpc.Response{ID: id, Result: json.RawMessage(`{}`)}} {
		if err := r.conn.Write(context.Background(), m); err != nil {
			t.Fatalf("Write(%T): %v", m, err)
		}
	}
	want := `{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"p","progress":1,"message":"compiling"}}` + "\n"
	if got := r.out.String(); got != want {
		t.Fatalf("Out:\n%s\nwant only the progress notification:\n%s", got, want)
	}
}

// Close interrupts a reader blocked on an input with deadlines and leaves
// the rest of the input unread.
func TestCloseStopsTheReaderWithoutConsumingInput(t *testing.T) {
	pr, pw, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer pr.Close()
	defer pw.Close()
	tr := &Transport{In: pr, Out: &lockedbuf.Buffer{}}
	c, err := tr.Connect(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	_ = c.Close()
	ctx, cancel := context.WithTimeout(context.Background(), testWait)
	defer cancel()
	if _, err := c.Read(ctx); !errors.Is(err, sdkmcp.ErrConnectionClosed) {
		t.Fatalf("Read after Close: %v, want the SDK's connection-closed error", err)
	}
	if _, err := io.WriteString(pw, "after close\n"); err != nil {
		t.Fatal(err)
	}
	// The reader stopped: what was written after Close is still there.
	_ = pr.SetReadDeadline(time.Now().Add(testWait))
	line, err := bufio.NewReader(pr).ReadString('\n')
	if err != nil || line != "after close\n" {
		t.Fatalf("reading the pipe after Close: %q, %v; want the line untouched by the transport", line, err)
	}
}

func TestConnectRequiresBothStreams(t *testing.T) {
	for _, tr := range []*Transport{{Out: io.Discard}, {In: strings.NewReader("")}} {
		if _, err := tr.Connect(context.Background()); err == nil {
			t.Fatalf("Connect with In %v, Out %v succeeded", tr.In, tr.Out)
		}
	}
}
