//go:build linux

package main

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/buildguard/buildguard/harness/fakeagent"
	"github.com/buildguard/buildguard/internal/testsupport/testbin"
	"github.com/buildguard/buildguard/internal/testsupport/wait"
)

// queue32Waiters is how many `build run` processes queue behind the build
// that holds the project (docs/performance.md#5.7).
const queue32Waiters = 32

// queue32Hold is how long the first build holds the project while the
// others wait: the minute of waiting the CPU target is stated per.
const queue32Hold = time.Minute

// queue32Settle is how long after the last arrival the quiet part of the
// hold begins: the waiting builds have each read the line their arrivals
// changed (a check 1–3 s after each one's own arrival) and back off.
const queue32Settle = 10 * time.Second

// queue32Lone is how many lone, uncontended runs give the start-up and
// build cost taken off each waiting process's CPU time.
const queue32Lone = 5

// agentClock records when the fake agent read each BUILD line, by
// connection: each `build run` process dials its own.
type agentClock struct {
	mu     sync.Mutex
	builds []buildLine
}

type buildLine struct {
	conn  int
	state string // started, ok or failed
	at    time.Time
}

func (c *agentClock) onCommand(conn int, line string) {
	at := time.Now()
	f := strings.Fields(line)
	if len(f) < 2 || f[0] != "BUILD" {
		return
	}
	c.mu.Lock()
	c.builds = append(c.builds, buildLine{conn: conn, state: f[1], at: at})
	c.mu.Unlock()
}

func (c *agentClock) lines() []buildLine {
	c.mu.Lock()
	defer c.mu.Unlock()
	return slices.Clone(c.builds)
}

// queue32Run is one `build run` process of the benchmark.
type queue32Run struct {
	cmd     *exec.Cmd
	spawned time.Time
	out     strings.Builder
	errc    chan error
}

func startBuildRun(b *testing.B, bin, dir, portFile, build string) *queue32Run {
	b.Helper()
	r := &queue32Run{errc: make(chan error, 1)}
	r.cmd = exec.Command(bin, "build", "run", build, "--port-file", portFile)
	r.cmd.Dir = dir
	r.cmd.Stdout = &r.out
	r.spawned = time.Now()
	if err := r.cmd.Start(); err != nil {
		b.Fatal(err)
	}
	go func() { r.errc <- r.cmd.Wait() }()
	return r
}

// taskCPU is the CPU time, user and system, that the live threads of
// process pid have used so far: the sum of their run times in
// /proc/PID/task/*/schedstat, to the nanosecond (the ticks of
// /proc/PID/stat are 10 ms, as much as a minute's wait may cost).
func taskCPU(b *testing.B, pid int) time.Duration {
	b.Helper()
	stats, err := filepath.Glob(fmt.Sprintf("/proc/%d/task/*/schedstat", pid))
	if err != nil || len(stats) == 0 {
		b.Fatalf("no threads of process %d in /proc: %v", pid, err)
	}
	var sum time.Duration
	for _, p := range stats {
		data, err := os.ReadFile(p)
		if err != nil {
			continue // a thread that ended meanwhile (Go ends one only with a goroutine locked to it)
		}
		var ns int64
		if _, err := fmt.Sscan(string(data), &ns); err != nil {
			b.Fatalf("reading %s: %v", p, err)
		}
		sum += time.Duration(ns)
	}
	return sum
}

// quietCPU samples the CPU time of each process of pids over a span:
// start it, then call the returned function at the span's end for each
// one's CPU per minute of the span.
func quietCPU(b *testing.B, pids []int) func() []float64 {
	b.Helper()
	start := time.Now()
	before := make([]time.Duration, len(pids))
	for i, pid := range pids {
		before[i] = taskCPU(b, pid)
	}
	return func() []float64 {
		span := time.Since(start).Minutes()
		rates := make([]float64, len(pids))
		for i, pid := range pids {
			rates[i] = ms(taskCPU(b, pid)-before[i]) / span
		}
		return rates
	}
}

// finish waits for the process (bounded) and returns its CPU time, user
// and system, with that of the children it waited for (the build's
// command): the rusage wait4 reports.
func (r *queue32Run) finish(b *testing.B, d time.Duration) time.Duration {
	b.Helper()
	select {
	case err := <-r.errc:
		if err != nil || !strings.Contains(r.out.String(), `"outcome":"ok"`) {
			b.Fatalf("build run %v: %v: %s", r.cmd.Args, err, r.out.String())
		}
	case <-time.After(d):
		r.cmd.Process.Kill()
		b.Fatalf("build run %v did not end within %s", r.cmd.Args, d)
	}
	ru := r.cmd.ProcessState.SysUsage().(*syscall.Rusage)
	return time.Duration(syscall.TimevalToNsec(ru.Utime) + syscall.TimevalToNsec(ru.Stime))
}

// BenchmarkQueue32 queues 32 `build run` processes of the released binary
// on one project behind a build that holds it for a minute, against the
// fake agent, each with a build of its own name (no two coalesce) whose
// command is `true` (docs/performance.md#5.7; issue 33).
//
// Hand-over: from the fake agent's receipt of one build's `BUILD ok` to
// its receipt of the next build's `BUILD started`, on the agent's clock.
// That is the closest pair of points outside the processes: it holds,
// besides the queue's hand-over, the rest of the ending build's process
// after its finish is acknowledged (the search for changed classes, the
// answer, the release of its turn) and the start of the next build's
// session (the agent's port, a connection, the handshake, the hold).
//
// CPU while waiting: each waiting process's CPU time (user and system,
// from wait4, with its build's command) less the median CPU time of
// queue32Lone lone runs of the same builds on the same project in the same
// benchmark, divided by the wait the queue measured for it (its result's
// detail, which also says how many builds were ahead: its place is
// checked). It reports the median and worst hand-over (handover-ms,
// worst-ms), the median and worst CPU per minute of waiting (cpu-ms/min,
// worst-cpu-ms/min), the lone run's CPU (lone-cpu-ms), how far the lone
// runs' CPU times spread (lone-spread-ms: what one process's start-up may
// add to or take from its figure) and the shortest wait (min-wait-s).
//
// Quiet: the same waiting processes' CPU over the part of the hold when
// nobody enters or leaves the line (from queue32Settle after the last
// arrival to the end of the hold), per minute, from their threads' run
// times (taskCPU): the median and worst (quiet-cpu-ms/min,
// worst-quiet-cpu-ms/min). Beside it, over the same span, the floor: the
// holding `build run`, a process of the same binary that waits on its
// build's command and its agent's socket and does nothing else
// (floor-cpu-ms/min).
func BenchmarkQueue32(b *testing.B) {
	clock := &agentClock{}
	bin := testbin.Build(b, b.TempDir())
	agent := fakeagent.NewServer(b, fakeagent.WithHeartbeat(-1),
		fakeagent.WithConfigFunc(func(c *fakeagent.Config) { c.OnCommand = clock.onCommand }))
	dir := b.TempDir()
	fifo := filepath.Join(dir, "hold.fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		b.Fatal(err)
	}
	builds := map[string]any{"hold": map[string]any{"command": []string{"cat", fifo}}}
	for i := range queue32Waiters {
		builds[fmt.Sprintf("b%02d", i)] = map[string]any{"command": []string{"true"}}
	}
	cfg, _ := json.Marshal(map[string]any{"builds": builds})
	if err := os.WriteFile(filepath.Join(dir, ".buildguard.json"), cfg, 0o644); err != nil {
		b.Fatal(err)
	}

	var loneCPU []time.Duration
	for i := range queue32Lone {
		r := startBuildRun(b, bin, dir, agent.PortFile(), fmt.Sprintf("b%02d", i))
		loneCPU = append(loneCPU, r.finish(b, time.Minute))
	}
	baseCPU := median(loneCPU)

	queued := filepath.Join(dir, ".buildguard", "queue", "t-*")
	tickets := func(n int) func() bool {
		return func() bool { m, _ := filepath.Glob(queued); return len(m) == n }
	}
	var gaps, rates, waits, quiet, floor []float64
	for b.Loop() {
		before := len(clock.lines())
		holder := startBuildRun(b, bin, dir, agent.PortFile(), "hold")
		wait.For(b, time.Minute, "the holding build's BUILD started", func() bool {
			return slices.ContainsFunc(clock.lines()[before:], func(l buildLine) bool { return l.state == "started" })
		})
		var runs []*queue32Run
		for i := range queue32Waiters {
			runs = append(runs, startBuildRun(b, bin, dir, agent.PortFile(), fmt.Sprintf("b%02d", i)))
			// Arrived: the next one comes after it, so the order of the
			// BUILD started lines is the order of runs.
			wait.For(b, time.Minute, fmt.Sprintf("%d tickets in the queue", i+2), tickets(i+2))
		}
		// The waits being measured, not waits for readiness.
		time.Sleep(queue32Settle)
		pids := []int{holder.cmd.Process.Pid}
		for _, r := range runs {
			pids = append(pids, r.cmd.Process.Pid)
		}
		span := quietCPU(b, pids)
		time.Sleep(queue32Hold - queue32Settle)
		q := span()
		floor = append(floor, q[0])
		quiet = append(quiet, q[1:]...)
		w, err := os.OpenFile(fifo, os.O_WRONLY, 0)
		if err != nil {
			b.Fatal(err)
		}
		w.Close() // the holding build's cat ends
		holder.finish(b, time.Minute)
		for i, r := range runs {
			cpu := r.finish(b, 5*time.Minute)
			waited, ahead, err := queueWait(r.out.String())
			if err != nil || ahead != i+1 {
				b.Fatalf("build run %d: %v, %d ahead: %s", i, err, ahead, r.out.String())
			}
			waits = append(waits, ms(waited))
			rates = append(rates, ms(cpu-baseCPU)/waited.Minutes())
		}
		g, err := handovers(clock.lines()[before:])
		if err != nil {
			b.Fatal(err)
		}
		if len(g) != queue32Waiters {
			b.Fatalf("%d hand-overs, want %d", len(g), queue32Waiters)
		}
		gaps = append(gaps, g...)
	}
	b.ReportMetric(median(gaps), "handover-ms")
	b.ReportMetric(slices.Max(gaps), "worst-ms")
	b.ReportMetric(median(rates), "cpu-ms/min")
	b.ReportMetric(slices.Max(rates), "worst-cpu-ms/min")
	b.ReportMetric(median(quiet), "quiet-cpu-ms/min")
	b.ReportMetric(slices.Max(quiet), "worst-quiet-cpu-ms/min")
	b.ReportMetric(median(floor), "floor-cpu-ms/min")
	b.ReportMetric(ms(baseCPU), "lone-cpu-ms")
	b.ReportMetric(ms(slices.Max(loneCPU)-slices.Min(loneCPU)), "lone-spread-ms")
	b.ReportMetric(slices.Min(waits)/1000, "min-wait-s")
}

// queueWait reads how long a build waited for its turn and how many builds
// were ahead of it from its result's detail (docs/safe-build.md#4).
func queueWait(out string) (waited time.Duration, ahead int, err error) {
	var res struct{ Detail string }
	if err := json.Unmarshal([]byte(out), &res); err != nil {
		return 0, 0, err
	}
	const mark = "it waited "
	i := strings.Index(res.Detail, mark)
	if i < 0 {
		return 0, 0, fmt.Errorf("no wait in the detail %q", res.Detail)
	}
	var d string
	if _, err := fmt.Sscanf(res.Detail[i+len(mark):], "%s for its turn in the project's build queue behind %d", &d, &ahead); err != nil {
		return 0, 0, fmt.Errorf("reading the wait in %q: %w", res.Detail, err)
	}
	waited, err = time.ParseDuration(d)
	return waited, ahead, err
}

// handovers returns, from one round's BUILD lines in the agent's order,
// the gap before each build after the first (ms); it fails when two builds
// overlap or one did not end ok.
func handovers(lines []buildLine) (gaps []float64, err error) {
	var last *buildLine
	running := -1
	for i := range lines {
		l := &lines[i]
		switch l.state {
		case "started":
			if running != -1 {
				return nil, fmt.Errorf("connection %d started while connection %d ran", l.conn, running)
			}
			if last != nil {
				gaps = append(gaps, ms(l.at.Sub(last.at)))
			}
			running = l.conn
		case "ok":
			if running != l.conn {
				return nil, fmt.Errorf("connection %d ended a build it did not start", l.conn)
			}
			running, last = -1, l
		default:
			return nil, fmt.Errorf("connection %d: BUILD %s", l.conn, l.state)
		}
	}
	return gaps, nil
}
