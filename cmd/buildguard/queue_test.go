//go:build unix

package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	sdkmcp "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/buildguard/buildguard/harness/fakeagent"
	"github.com/buildguard/buildguard/internal/proc"
	"github.com/buildguard/buildguard/internal/testsupport/testbin"
	"github.com/buildguard/buildguard/internal/testsupport/wait"
)

// queueProject is a project whose builds record their start and end in
// record.log; a build whose name is in a "hold-NAME" file waits until that
// file is removed. Every safe build of it runs as its own build name, so
// the record says which call ran when.
type queueProject struct {
	bin, dir, portFile string
	agent              *fakeagent.Server
}

const recordScript = `
echo "start $1 $$ $(date +%s.%N)" >> record.log
while [ -e "hold-$1" ]; do sleep 0.01; done
sleep 0.05
echo "end $1 $$ $(date +%s.%N)" >> record.log
`

func newQueueProject(t *testing.T, names ...string) *queueProject {
	t.Helper()
	return newQueueProjectWith(t, nil, names...)
}

// newQueueProjectWith is newQueueProject whose agent has opts too.
func newQueueProjectWith(t *testing.T, opts []fakeagent.Option, names ...string) *queueProject {
	t.Helper()
	p := &queueProject{bin: testbin.Build(t, t.TempDir()), dir: t.TempDir()}
	p.agent = fakeagent.NewServer(t, append([]fakeagent.Option{fakeagent.WithHeartbeat(-1)}, opts...)...)
	p.portFile = p.agent.PortFile()
	builds := map[string]any{}
	for _, n := range names {
		builds[n] = map[string]any{"command": []string{"sh", "record.sh", n}}
	}
	cfg, _ := json.Marshal(map[string]any{"builds": builds})
	for name, data := range map[string]string{".buildguard.json": string(cfg), "record.sh": recordScript} {
		if err := os.WriteFile(filepath.Join(p.dir, name), []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return p
}

// hold makes build name wait once it has started, until release.
func (p *queueProject) hold(t *testing.T, name string) (release func()) {
	t.Helper()
	path := filepath.Join(p.dir, "hold-"+name)
	if err := os.WriteFile(path, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	return func() { os.Remove(path) }
}

// tickets is how many builds wait or run in the project's queue.
func (p *queueProject) tickets() int {
	m, _ := filepath.Glob(filepath.Join(p.dir, ".buildguard", "queue", "t-*"))
	return len(m)
}

func (p *queueProject) waitTickets(t *testing.T, n int) {
	t.Helper()
	wait.For(t, 30*time.Second, fmt.Sprintf("%d tickets in the queue", n), func() bool { return p.tickets() == n })
}

// record is record.log: the builds' starts and ends, in order.
type event struct {
	kind, name string
	at         time.Time
}

func (p *queueProject) record(t *testing.T) []event {
	t.Helper()
	data, _ := os.ReadFile(filepath.Join(p.dir, "record.log"))
	var out []event
	for _, l := range strings.Split(strings.TrimSpace(string(data)), "\n") {
		f := strings.Fields(l)
		if len(f) != 4 {
			continue
		}
		sec, _ := strconv.ParseFloat(f[3], 64)
		out = append(out, event{f[0], f[1], time.Unix(0, int64(sec*1e9))})
	}
	return out
}

// stdio starts `buildguard mcp` in the project and connects to it.
func (p *queueProject) stdio(t *testing.T) *sdkmcp.ClientSession {
	t.Helper()
	cs, _ := p.stdioServer(t)
	return cs
}

// stdioServer is stdio, with the server's process.
func (p *queueProject) stdioServer(t *testing.T) (*sdkmcp.ClientSession, *exec.Cmd) {
	t.Helper()
	cmd := exec.Command(p.bin, "mcp", "--port-file", p.portFile)
	cmd.Dir = p.dir
	client := sdkmcp.NewClient(&sdkmcp.Implementation{Name: "queue-test", Version: "1"}, nil)
	cs, err := client.Connect(wait.Context(t, 20*time.Second), &sdkmcp.CommandTransport{Command: cmd}, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs, cmd
}

// http starts `buildguard mcp --http` in the project and connects to it.
func (p *queueProject) http(t *testing.T) *sdkmcp.ClientSession {
	t.Helper()
	cs, _ := p.httpServer(t)
	return cs
}

// httpServer is http, with the server's process.
func (p *queueProject) httpServer(t *testing.T) (*sdkmcp.ClientSession, *exec.Cmd) {
	t.Helper()
	urlFile := filepath.Join(t.TempDir(), "url")
	cmd := exec.Command(p.bin, "mcp", "--port-file", p.portFile, "--http", "127.0.0.1:0", "--url-file", urlFile)
	cmd.Dir = p.dir
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Signal(syscall.SIGTERM); cmd.Wait() })
	url := strings.TrimSpace(string(wait.File(t, 20*time.Second, urlFile)))
	client := sdkmcp.NewClient(&sdkmcp.Implementation{Name: "queue-test", Version: "1"}, nil)
	cs, err := client.Connect(wait.Context(t, 20*time.Second), &sdkmcp.StreamableClientTransport{Endpoint: url}, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs, cmd
}

// outcome is one caller's result.
type outcome struct {
	caller string
	result map[string]any
	raw    string
	err    error
}

// callMCP asks cs for a safe build of name in the background.
func callMCP(ctx context.Context, cs *sdkmcp.ClientSession, caller, name string, out chan<- outcome) {
	go func() {
		res, err := cs.CallTool(ctx, &sdkmcp.CallToolParams{Name: "reclazz_safe_build", Arguments: map[string]any{"build": name}})
		o := outcome{caller: caller, err: err}
		if err == nil {
			raw, _ := json.Marshal(res.StructuredContent)
			o.raw = string(raw)
			json.Unmarshal(raw, &o.result)
		}
		out <- o
	}()
}

// callCLI runs `buildguard build run name` in the background.
func (p *queueProject) callCLI(t *testing.T, caller, name string, out chan<- outcome) *exec.Cmd {
	t.Helper()
	cmd := exec.Command(p.bin, "build", "run", name, "--port-file", p.portFile)
	cmd.Dir = p.dir
	var stdout strings.Builder
	cmd.Stdout = &stdout
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() {
		err := cmd.Wait()
		o := outcome{caller: caller, raw: strings.TrimSpace(stdout.String())}
		if json.Unmarshal([]byte(o.raw), &o.result) != nil {
			o.err = fmt.Errorf("build run: %v: %q", err, o.raw)
		}
		out <- o
	}()
	return cmd
}

// TestQueueAcrossProcesses: twelve safe builds from two stdio servers, an
// HTTP server and three `build run` processes, arriving one after another
// while the first runs, all complete, none refused, never two at once, in
// the order they arrived (docs/decisions.md#D18).
func TestQueueAcrossProcesses(t *testing.T) {
	t.Parallel()
	var names []string
	for i := range 12 {
		names = append(names, fmt.Sprintf("b%02d", i))
	}
	p := newQueueProject(t, names...)
	a, b, h := p.stdio(t), p.stdio(t), p.http(t)
	ctx := wait.Context(t, 120*time.Second)
	out := make(chan outcome, len(names))
	release := p.hold(t, names[0])
	for i, n := range names {
		caller := []string{"stdio-a", "stdio-b", "http", "cli"}[i%4]
		switch caller {
		case "stdio-a":
			callMCP(ctx, a, caller, n, out)
		case "stdio-b":
			callMCP(ctx, b, caller, n, out)
		case "http":
			callMCP(ctx, h, caller, n, out)
		case "cli":
			p.callCLI(t, caller, n, out)
		}
		p.waitTickets(t, i+1) // arrived: the next one comes after it
	}
	release()
	for range names {
		o := <-out
		if o.err != nil || o.result["outcome"] != "ok" {
			t.Errorf("%s: %v %s", o.caller, o.err, o.raw)
		}
	}
	rec := p.record(t)
	if len(rec) != 2*len(names) {
		t.Fatalf("record has %d events, want %d: %v", len(rec), 2*len(names), rec)
	}
	var order []string
	for i := 0; i < len(rec); i += 2 {
		s, e := rec[i], rec[i+1]
		if s.kind != "start" || e.kind != "end" || s.name != e.name {
			t.Fatalf("two builds overlapped: %v then %v", s, e)
		}
		order = append(order, s.name)
	}
	if !slices.Equal(order, names) {
		t.Errorf("builds ran in the order %v, want the arrival order %v", order, names)
	}
	if n := p.tickets(); n != 0 {
		t.Errorf("%d tickets left in the queue", n)
	}
}

// TestQueueCoalescesAcrossProcesses: ten identical calls from four
// processes, arriving while another build runs, are served by one build and
// all get its result, byte for byte.
func TestQueueCoalescesAcrossProcesses(t *testing.T) {
	t.Parallel()
	p := newQueueProject(t, "gate", "same")
	a, b, h := p.stdio(t), p.stdio(t), p.http(t)
	ctx := wait.Context(t, 120*time.Second)
	release := p.hold(t, "gate")
	gate := make(chan outcome, 1)
	callMCP(ctx, a, "gate", "gate", gate)
	p.waitTickets(t, 1)
	out := make(chan outcome, 10)
	callers := []string{"stdio-a", "stdio-b", "http", "cli", "stdio-a", "stdio-b", "http", "cli", "stdio-a", "stdio-b"}
	for i, c := range callers {
		switch c {
		case "stdio-a":
			callMCP(ctx, a, c, "same", out)
		case "stdio-b":
			callMCP(ctx, b, c, "same", out)
		case "http":
			callMCP(ctx, h, c, "same", out)
		case "cli":
			p.callCLI(t, c, "same", out)
		}
		p.waitTickets(t, i+2)
	}
	release()
	if o := <-gate; o.result["outcome"] != "ok" {
		t.Fatalf("gate: %v %s", o.err, o.raw)
	}
	var first string
	for range callers {
		o := <-out
		if o.err != nil || o.result["outcome"] != "ok" {
			t.Fatalf("%s: %v %s", o.caller, o.err, o.raw)
		}
		canon, _ := json.Marshal(o.result) // MCP clients decode into maps: compare the JSON, not its key order
		if first == "" {
			first = string(canon)
		} else if string(canon) != first {
			t.Errorf("%s got a different result:\n%s\nwant\n%s", o.caller, canon, first)
		}
	}
	runs := 0
	for _, e := range p.record(t) {
		if e.kind == "start" && e.name == "same" {
			runs++
		}
	}
	if runs != 1 {
		t.Errorf("the build ran %d times for ten identical calls, want once", runs)
	}
	if n := p.tickets(); n != 0 {
		t.Errorf("%d tickets left in the queue", n)
	}
}

// TestQueueKilledHolderAndCancelledWaiter: SIGKILL of the `build run` whose
// build runs lets the next build start within a second; a call cancelled
// while it waits leaves the queue and its build never runs.
func TestQueueKilledHolderAndCancelledWaiter(t *testing.T) {
	t.Parallel()
	p := newQueueProject(t, "victim", "cancelled", "next")
	cs := p.stdio(t)
	p.hold(t, "victim") // never released: only the kill ends it
	out := make(chan outcome, 3)
	holder := p.callCLI(t, "cli", "victim", out)
	wait.For(t, 30*time.Second, "the victim's build to start", func() bool { return len(p.record(t)) == 1 })
	cctx, cancel := context.WithCancel(wait.Context(t, 60*time.Second))
	callMCP(cctx, cs, "cancelled", "cancelled", out)
	p.waitTickets(t, 2)
	callMCP(wait.Context(t, 60*time.Second), cs, "next", "next", out)
	p.waitTickets(t, 3)
	cancel()
	p.waitTickets(t, 2)
	killed := time.Now()
	if err := holder.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	got := map[string]outcome{}
	for range 3 {
		o := <-out
		mu.Lock()
		got[o.caller] = o
		mu.Unlock()
	}
	if o := got["next"]; o.err != nil || o.result["outcome"] != "ok" {
		t.Fatalf("next: %v %s", o.err, o.raw)
	}
	var started time.Time
	for _, e := range p.record(t) {
		if e.name == "cancelled" {
			t.Error("the build cancelled while it waited ran")
		}
		if e.kind == "start" && e.name == "next" {
			started = e.at
		}
	}
	if gap := started.Sub(killed); gap > time.Second {
		t.Errorf("the next build started %s after the holder was killed, want within 1s", gap)
	} else {
		t.Logf("next build started %s after SIGKILL of the holder", gap)
	}
}

// TestQueueMaxBuildsAcrossProjects: with BUILDGUARD_MAX_BUILDS=1 a build of
// a second project waits for the user's one slot, says so, and runs once
// the first project's build has ended; the slots live in the user's cache
// directory.
func TestQueueMaxBuildsAcrossProjects(t *testing.T) {
	t.Parallel()
	a := newQueueProject(t, "a")
	b := newQueueProject(t, "b")
	b.bin = a.bin
	cache := t.TempDir()
	env := append(os.Environ(), "BUILDGUARD_MAX_BUILDS=1", "XDG_CACHE_HOME="+cache, "HOME="+cache)
	run := func(p *queueProject, name string, stderr *strings.Builder) *exec.Cmd {
		cmd := exec.Command(p.bin, "build", "run", name, "--port-file", p.portFile)
		cmd.Dir, cmd.Env, cmd.Stderr = p.dir, env, stderr
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		return cmd
	}
	release := a.hold(t, "a")
	var errA, errB strings.Builder
	first := run(a, "a", &errA)
	wait.For(t, 30*time.Second, "project a's build to start", func() bool { return len(a.record(t)) == 1 })
	second := run(b, "b", &errB)
	slots := filepath.Join(cache, "buildguard", "slots")
	wait.For(t, 30*time.Second, "project b to wait for a slot", func() bool {
		m, _ := filepath.Glob(filepath.Join(slots, "t-*"))
		return len(m) == 2
	})
	if len(b.record(t)) != 0 {
		t.Fatal("project b's build ran beyond the cap")
	}
	release()
	if err := first.Wait(); err != nil {
		t.Fatalf("project a: %v\n%s", err, errA.String())
	}
	if err := second.Wait(); err != nil {
		t.Fatalf("project b: %v\n%s", err, errB.String())
	}
	if !strings.Contains(errB.String(), "waiting for one of 1 build slots of this user (BUILDGUARD_MAX_BUILDS)") {
		t.Errorf("project b's stderr does not say it waits for a slot:\n%s", errB.String())
	}
	ra, rb := a.record(t), b.record(t)
	if len(ra) != 2 || len(rb) != 2 || rb[0].at.Before(ra[1].at) {
		t.Errorf("the builds overlapped: a %v, b %v", ra, rb)
	}
}

// TestQueueWaitsForTheHandover: the agent releases a hold only some time
// after it acknowledged `BUILD ok` (docs/agent-protocol.md#5), and rejects
// another owner's `started` until then. A wrapper whose turn comes right
// after another owner's build is not refused for it: it asks again until
// the hold is released, and runs (docs/decisions.md#D18).
func TestQueueWaitsForTheHandover(t *testing.T) {
	t.Parallel()
	p := newQueueProjectWith(t, []fakeagent.Option{fakeagent.WithAcceptance(func(ctx context.Context, _ string) fakeagent.Outcome {
		select {
		case <-time.After(300 * time.Millisecond):
		case <-ctx.Done():
		}
		return fakeagent.AcceptSuccess
	})})
	release := p.hold(t, "first")
	ctx := wait.Context(t, 60*time.Second)
	wrap := func(owner string) (*exec.Cmd, *strings.Builder) {
		cmd := exec.CommandContext(ctx, p.bin, "--port-file", p.portFile, "--owner", owner, "--", "sh", "record.sh", owner)
		cmd.Dir = p.dir
		var stderr strings.Builder
		cmd.Stderr = &stderr
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		return cmd, &stderr
	}
	first, firstErr := wrap("first")
	p.waitTickets(t, 1)
	second, secondErr := wrap("second")
	p.waitTickets(t, 2)
	release()
	if err := first.Wait(); err != nil {
		t.Errorf("first build: %v\n%s", err, firstErr)
	}
	if err := second.Wait(); err != nil {
		t.Errorf("second build, whose turn came while the first's hold was being released: %v\n%s", err, secondErr)
	}
	rec := p.record(t)
	if len(rec) != 4 || rec[0].name != "first" || rec[2].name != "second" || rec[2].kind != "start" {
		t.Errorf("record %v, want the first build, then the second", rec)
	}
	var builds []string
	for _, c := range p.agent.Commands() {
		f := strings.Fields(c)
		if len(f) < 2 || f[0] != "BUILD" {
			continue
		}
		owner := ""
		for _, a := range f[2:] {
			if o, ok := strings.CutPrefix(a, "owner="); ok {
				owner = o
			}
		}
		builds = append(builds, f[1]+" "+owner)
	}
	if got := strings.Join(builds, ","); !strings.Contains(got, "ok first,started second,started second") || !strings.HasSuffix(got, "started second,ok second") {
		t.Errorf("agent got %s, want the second owner's start asked again after the first's ok until accepted", got)
	}
}

// forkScript is a build whose command starts a grandchild that appends the
// time to written.log every 20 ms, whatever hangs up, and runs until it is
// killed.
const forkScript = `
(trap '' HUP; while :; do date +%s.%N >> written.log; sleep 0.02; done) &
echo $! > grandchild.pid.tmp && mv grandchild.pid.tmp grandchild.pid
while :; do sleep 1; done
`

// TestQueueOutlivedSupervisorEnded: the supervisor of a running build —
// `build run`, a stdio or an HTTP `buildguard mcp` — is SIGKILLed with its
// watchdog (the whole tree killed, or the watchdog killed first); the
// kernel ends its command, not the grandchild that keeps writing. The next
// build of the project (a safe build of an MCP server, or `build run`)
// does not start while the grandchild runs: it ends it after the grace
// period, starts after its last write, and its detail says so
// (docs/decisions.md#D22).
func TestQueueOutlivedSupervisorEnded(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("the processes of a build are recorded on Linux (docs/safe-build.md#4)")
	}
	t.Parallel()
	for _, killed := range []string{"build run", "stdio", "http"} {
		t.Run(strings.ReplaceAll(killed, " ", "-"), func(t *testing.T) {
			t.Parallel()
			outlivedSupervisor(t, killed)
		})
	}
}

func outlivedSupervisor(t *testing.T, killed string) {
	p := newQueueProject(t, "next")
	cfg := `{"builds": {"victim": {"command": ["sh", "fork.sh"]}, "next": {"command": ["sh", "record.sh", "next"]}}}`
	for name, data := range map[string]string{".buildguard.json": cfg, "fork.sh": forkScript} {
		if err := os.WriteFile(filepath.Join(p.dir, name), []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	out := make(chan outcome, 2)
	var holder *exec.Cmd
	next := func() { callMCP(wait.Context(t, 60*time.Second), p.stdio(t), "next", "next", out) }
	switch killed {
	case "build run":
		holder = p.callCLI(t, "victim", "victim", out)
	case "stdio", "http":
		var cs *sdkmcp.ClientSession
		if killed == "stdio" {
			cs, holder = p.stdioServer(t)
		} else {
			cs, holder = p.httpServer(t)
		}
		callMCP(wait.Context(t, 60*time.Second), cs, "victim", "victim", out)
		next = func() { p.callCLI(t, "next", "next", out) }
	}
	gpid, err := strconv.Atoi(strings.TrimSpace(string(wait.File(t, 30*time.Second, filepath.Join(p.dir, "grandchild.pid")))))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = syscall.Kill(gpid, syscall.SIGKILL) })
	written := func() []string {
		data, _ := os.ReadFile(filepath.Join(p.dir, "written.log"))
		return strings.Fields(string(data))
	}
	var dogs []int
	wait.For(t, 10*time.Second, "the supervisor's watchdog", func() bool { dogs = watchdogsOf(holder.Process.Pid); return len(dogs) == 1 })
	if err := syscall.Kill(dogs[0], syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	if err := holder.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	if o := <-out; o.caller != "victim" {
		t.Fatalf("got %s's outcome first", o.caller)
	}
	// The fault: the grandchild outlives the supervisor and writes after it.
	n := len(written())
	wait.For(t, 10*time.Second, "a write of the grandchild after its supervisor died", func() bool { return len(written()) > n })
	if proc.Gone(gpid) {
		t.Fatal("the grandchild died with its supervisor: nothing to test")
	}

	next()
	o := <-out
	if o.err != nil || o.result["outcome"] != "ok" {
		t.Fatalf("next: %v %s", o.err, o.raw)
	}
	if d, _ := o.result["detail"].(string); !strings.Contains(d, "before this build started, it ended") || !strings.Contains(d, "outlived its supervisor") {
		t.Errorf("next's detail does not say it ended the earlier build's processes: %s", d)
	}
	if !proc.Gone(gpid) {
		t.Error("the grandchild still runs after the next build")
	}
	w := written()
	last, _ := strconv.ParseFloat(w[len(w)-1], 64)
	for _, e := range p.record(t) {
		if e.kind == "start" && e.name == "next" && !e.at.After(time.Unix(0, int64(last*1e9))) {
			t.Errorf("the next build started at %s, before the killed build's last write at %.3f", e.at, last)
		}
	}
}
