//go:build mage

package main

import (
	"fmt"
	"regexp"
	"sort"
	"strconv"
	"strings"

	"github.com/magefile/mage/mg"
	"github.com/magefile/mage/sh"
)

// benchLine matches one `go test -bench` result line: name, then metrics.
var benchLine = regexp.MustCompile(`(?m)^Benchmark(\S+?)(?:-\d+)?\s+\d+\s+(.*)$`)

// benchMetric extracts "<value> <unit>" from a result line's metrics.
func benchMetric(metrics, unit string) (float64, bool) {
	m := regexp.MustCompile(`([0-9.]+) ` + regexp.QuoteMeta(unit) + `(?:\s|$)`).FindStringSubmatch(metrics)
	if m == nil {
		return 0, false
	}
	v, err := strconv.ParseFloat(m[1], 64)
	return v, err == nil
}

// Bench measures each component against a baseline taken in the same run and
// prints the ratios: the wrapper's median overhead over a bare `true` (target
// under 5 ms) and its passthrough throughput (pipes ≥ 0.9×, pty ≥ 0.5×); one
// correlated VERIFY next to a raw round trip (within 1.5×); an MCP stdio
// session next to `cat` (under 15 ms median, under 25 MiB peak RSS); and one
// reclazz_verify call next to the raw round trip (target within 2×) and to
// the raw round trip on a connection of its own; one
// reclazz_safe_build call of a 1 s build next to the same build through the
// wrapper (target ≤ 1.1×), and the latency from a build's output line to
// the client's progress notification (target median < 50 ms); the
// reclazz_verify call over streamable HTTP next to stdio, and tools/list
// requests per second from 16 concurrent HTTP clients (docs/http.md#7); a
// reclazz_safe_build answered as a task to its first tasks/get (target
// under 1 ms) and one tasks/get poll (target under 0.5 ms) next to a
// synchronous reclazz_status, over stdio in one process and over loopback
// HTTP to a server process (docs/safe-build.md#13); the
// build queue's cost per uncontended build against the same build without it
// (target under 2 ms) and its handover gap (target under 20 ms,
// docs/decisions.md#D18), and 32 `build run` processes queued on one
// project: each hand-over and the CPU a waiting process uses
// (docs/performance.md#5.7); the diagnostics parser's throughput (target ≥ 100 MB/s) and, per failing build
// of its corpus, the raw output against the diagnostics text (target ≥ 10×
// smaller, docs/safe-build.md#12); each row of docs/performance.md#1
// (start-up, wrapper and HTTP against the bare go-sdk floor, target ≤ 1.2×,
// and the wrapper against its floor linked with go-sdk);
// the guard's share of one cycle of a continuous build (target ≤ 50 ms,
// docs/decisions.md#D20); and the scale bench: `buildguard build run` next
// to the raw build on generated projects of 1,000 to 100,000 class files,
// for changes of 1, 512 and every class, and the cost of each scan of the
// search for changed classes per 10,000 class files (docs/performance.md#5);
// and the proof of 1 and of 512 changed classes with the reference JVM
// agent as it is and with TCP_NODELAY on its status socket, from BUILD
// ok's acknowledgement to the answer (targets 100 ms and 2 s), next to the
// agent's batch and one VERIFY round (docs/performance.md#5.5);
// and 1 GiB of build output through `build run` and the MCP tool next to
// the same command's output to a file, with the peak RSS at 64 MiB and at
// 1 GiB (target ≥ 200 MB/s, memory flat, docs/performance.md#5.6).
func Bench() error {
	results := map[string]string{}
	for _, run := range []struct{ pattern, benchtime, pkg string }{
		{"^BenchmarkOverhead$", "50x", "./cmd/buildguard/"},
		// Moving 256 MiB through a pipe takes 60-200 ms here, from one run to
		// the next: many pairs make the median ratio settle.
		{"^BenchmarkPassthrough$/^pipe$", "25x", "./cmd/buildguard/"},
		{"^BenchmarkPassthrough$/^transcript$", "9x", "./cmd/buildguard/"},
		{"^BenchmarkPassthrough$/^pty$", "3x", "./cmd/buildguard/"},
		{"^BenchmarkVerifyRoundTrip$", "3000x", "./agentproto/"},
		{"^BenchmarkStdioSession$", "40x", "./mcp/"},
		{"^BenchmarkVerifyCall$", "1000x", "./mcp/"},
		{"^BenchmarkSafeBuildOverhead$", "7x", "./cmd/buildguard/"},
		{"^BenchmarkSafeBuildProgressLatency$", "3x", "./cmd/buildguard/"},
		{"^BenchmarkHTTPCall$", "1000x", "./mcp/"},
		{"^BenchmarkHTTPConcurrent$", "4000x", "./mcp/"},
		{"^BenchmarkTaskPoll$", "50x", "./service/mcptask/"},
		{"^BenchmarkTaskHTTP$", "50x", "./cmd/buildguard/"},
		{"^BenchmarkParse$", "20x", "./service/diagnostics/"},
		{"^BenchmarkFailedText$", "5x", "./service/tools/"},
		{"^BenchmarkUncontended$", "200x", "./service/buildqueue/"},
		{"^BenchmarkHandover$", "200x", "./service/buildqueue/"},
		// 32 `build run` processes queued behind a build that holds the
		// project for a minute (docs/performance.md#5.7).
		{"^BenchmarkQueue32$", "1x", "./cmd/buildguard/"},
		{"^BenchmarkFloorSession$", "60x", "./cmd/buildguard/"},
		{"^BenchmarkFloorStart$", "60x", "./cmd/buildguard/"},
		{"^BenchmarkFloorWrap$", "60x", "./cmd/buildguard/"},
		{"^BenchmarkFloorHTTPList$", "2000x", "./cmd/buildguard/"},
		{"^BenchmarkFloorHTTPConcurrent$", "20x", "./cmd/buildguard/"},
		{"^BenchmarkContinuousCycle$", "300x", "./buildguard/"},
		{"^BenchmarkProof$", "10x", "./service/safebuild/"},
		// Two live JVMs with the reference agent, one after the other
		// (docs/performance.md#5.5): about 75 s in all, most of it the
		// javac runs, the JVMs' start and the builds of 512 classes.
		{"^BenchmarkRefAgentProof$", "10x", "./harness/refagent/"},
		// The scale bench (docs/performance.md#5): each iteration waits
		// about 2 s for the files to settle, and the largest project's
		// change of every class takes most of a minute.
		{"^BenchmarkScale$/^files=1000$", "3x", "./harness/scale/"},
		{"^BenchmarkScale$/^files=20000$/^change=(1|512)$", "3x", "./harness/scale/"},
		// The change of every class: the pace of 20,000 rewrites moves by
		// a second from one iteration to the next.
		{"^BenchmarkScale$/^files=20000$/^change=all$", "7x", "./harness/scale/"},
		{"^BenchmarkScale$/^files=100000$", "1x", "./harness/scale/"},
		{"^BenchmarkScan$", "1x", "./service/safebuild/"},
		{"^BenchmarkWatch$", "3x", "./service/safebuild/"},
		// 1 GiB of build output (docs/performance.md#5.6): each iteration
		// of a 1 GiB row writes 1 GiB of log and 1 GiB for the floor.
		{"^BenchmarkBigOutput$", "3x", "./cmd/buildguard/"},
	} {
		out, err := sh.Output("go", "test", "-run", "^$", "-bench", run.pattern, "-benchtime", run.benchtime, run.pkg)
		fmt.Println(out)
		if err != nil {
			return err
		}
		for _, m := range benchLine.FindAllStringSubmatch(out, -1) {
			results[m[1]] = m[2]
		}
	}
	r := benchResults(results)
	m, err := r.units("Overhead", "direct-ms", "wrapped-ms", "overhead-ms")
	if err != nil {
		return err
	}
	fmt.Printf("overhead: buildguard -- true %.2f ms vs true %.2f ms (medians): +%.2f ms median overhead (target < 5 ms)\n", m[1], m[0], m[2])
	for _, c := range []struct{ name, target string }{
		{"pipe", "≥ 0.9×"},
		{"transcript", "none"},
		{"pty", "≥ 0.5×"},
	} {
		if m, err = r.units("Passthrough/"+c.name, "direct-MB/s", "wrapped-MB/s", "ratio"); err != nil {
			return err
		}
		fmt.Printf("passthrough %s: wrapped %.0f MB/s vs direct %.0f MB/s: %.2f× (target %s)\n", c.name, m[1], m[0], m[2], c.target)
	}
	for _, c := range []struct{ bench, what, target string }{
		{"VerifyRoundTrip", "agentproto VERIFY", "≤ 1.5×"},
		{"VerifyCall", "MCP reclazz_verify (new connection per call)", "≤ 2×"},
	} {
		if m, err = r.units(c.bench, "verify-us", "raw-us", "ratio"); err != nil {
			return err
		}
		fmt.Printf("%s: %.0f µs vs raw round trip %.0f µs (medians): %.2f× (target %s)\n", c.what, m[0], m[1], m[2], c.target)
	}
	if m, err = r.units("VerifyCall", "verify-us", "dial-raw-us", "ratio-dial"); err != nil {
		return err
	}
	fmt.Printf("MCP reclazz_verify: %.0f µs vs a raw VERIFY on a connection of its own (dial, handshake, VERIFY, close) %.0f µs (medians): %.2f× (no target; docs/performance.md#4)\n", m[0], m[1], m[2])
	if m, err = r.units("StdioSession", "session-ms", "cat-ms", "peak-MiB", "cat-peak-MiB"); err != nil {
		return err
	}
	fmt.Printf("mcp stdio session (initialize + tools/list + EOF): %.2f ms vs cat %.2f ms (medians), peak RSS %.1f MiB vs cat %.1f MiB (targets < 15 ms, < 25 MiB)\n", m[0], m[1], m[2], m[3])
	if m, err = r.units("SafeBuildOverhead", "tool-ms", "wrapper-ms", "ratio"); err != nil {
		return err
	}
	fmt.Printf("reclazz_safe_build of a 1 s build: %.0f ms vs buildguard -- sleep 1 %.0f ms (medians): %.2f× (target ≤ 1.1×)\n", m[0], m[1], m[2])
	if m, err = r.units("SafeBuildProgressLatency", "latency-ms", "worst-ms", "notifications"); err != nil {
		return err
	}
	fmt.Printf("safe build progress: output line to client notification %.2f ms median, %.2f ms worst, over %.0f notifications (target median < 50 ms)\n", m[0], m[1], m[2])
	if m, err = r.units("HTTPCall", "http-us", "stdio-us", "ratio"); err != nil {
		return err
	}
	fmt.Printf("MCP reclazz_verify over streamable HTTP: %.0f µs vs over stdio %.0f µs (medians, same server and agent): %.2f×\n", m[0], m[1], m[2])
	if m, err = r.units("HTTPConcurrent", "req/s"); err != nil {
		return err
	}
	fmt.Printf("MCP tools/list over streamable HTTP from 16 concurrent clients: %.0f requests/s\n", m[0])
	if err := queueBench(r); err != nil {
		return err
	}
	if err := taskBench(r); err != nil {
		return err
	}
	if err := floorBench(r); err != nil {
		return err
	}
	if m, err = r.units("ContinuousCycle", "µs/cycle"); err != nil {
		return err
	}
	fmt.Printf("continuous build: the guard's share of one cycle (channel start, BUILD started ack, finish, BUILD ok ack) %.0f µs (target ≤ 50 ms; docs/decisions.md#D20)\n", m[0])
	if err := proofBench(r); err != nil {
		return err
	}
	if err := refAgentBench(r); err != nil {
		return err
	}
	if err := scaleBench(r); err != nil {
		return err
	}
	if err := bigOutputBench(r); err != nil {
		return err
	}
	return diagnosticsBench(r)
}

// bigOutputBench prints, per front, a build printing 64 MiB and 1 GiB of
// output through buildguard against the same command's output to a file,
// with buildguard's peak RSS, and the targets of issue 33: ≥ 200 MB/s at
// 1 GiB, and memory flat (docs/performance.md#5.6).
func bigOutputBench(r benchResults) error {
	met := map[bool]string{true: "met", false: "NOT met"}
	for _, front := range []struct{ name, what string }{
		{"run", "buildguard build run"},
		{"mcp", "reclazz_safe_build over stdio with progress"},
	} {
		var peaks []float64
		for _, size := range []string{"64MiB", "1GiB"} {
			m, err := r.units("BigOutput/"+front.name+"/"+size, "MB/s", "floor-MB/s", "ratio", "peak-MiB")
			if err != nil {
				return err
			}
			peaks = append(peaks, m[3])
			target := "no target"
			if size == "1GiB" {
				target = fmt.Sprintf("target ≥ 200 MB/s: %s; peak ≤ the 64 MiB run's + 8 MiB: %s", met[m[0] >= 200], met[m[3] <= peaks[0]+8])
			}
			fmt.Printf("big output, %s of it through %s: %.0f MB/s vs the command to a file %.0f MB/s: %.2f× the time; peak RSS %.1f MiB, every error counted, the whole log written (%s)\n",
				size, front.what, m[0], m[1], m[2], m[3], target)
		}
	}
	return nil
}

// benchResults maps a benchmark's name (without "Benchmark") to the
// metrics of its result line.
type benchResults map[string]string

// units returns the named metrics of one benchmark, in order, or an error
// naming the first it did not report.
func (r benchResults) units(name string, units ...string) ([]float64, error) {
	vs := make([]float64, len(units))
	for i, unit := range units {
		v, ok := benchMetric(r[name], unit)
		if !ok {
			return nil, mg.Fatalf(1, "benchmark %s reported no %s", name, unit)
		}
		vs[i] = v
	}
	return vs, nil
}

// queueBench prints the build queue's cost per uncontended build and its
// handover gap (docs/decisions.md#D18), and the hand-overs and the CPU
// while waiting of 32 queued `build run` processes
// (docs/performance.md#5.7).
func queueBench(r benchResults) error {
	u, err := r.units("Uncontended", "build-ms", "overhead-ms")
	if err != nil {
		return err
	}
	h, err := r.units("Handover", "handover-ms")
	if err != nil {
		return err
	}
	fmt.Printf("build queue: uncontended +%.2f ms per build over a %.2f ms build without the queue (median of pairs, target < 2 ms); handover from one build's end to the next one's start %.2f ms median (target < 20 ms; docs/decisions.md#D18)\n", u[1], u[0], h[0])
	q, err := r.units("Queue32", "handover-ms", "worst-ms", "cpu-ms/min", "worst-cpu-ms/min", "lone-cpu-ms", "lone-spread-ms",
		"quiet-cpu-ms/min", "worst-quiet-cpu-ms/min", "floor-cpu-ms/min")
	if err != nil {
		return err
	}
	fmt.Printf("32 build run processes queued on one project: hand-over from BUILD ok to the next BUILD started %.1f ms median, %.1f ms worst (target ≤ 20 ms each); CPU while waiting %.1f ms per minute median, %.1f worst, beyond a lone run's %.1f ms (lone runs spread over %.1f ms) (target ≤ 10); in the quiet part of the wait %.2f ms per minute median, %.2f worst, against the floor of the same binary waiting on its build, %.2f ms per minute (docs/performance.md#5.7)\n", q[0], q[1], q[2], q[3], q[4], q[5], q[6], q[7], q[8])
	return nil
}

// taskBench prints the tasks extension's figures over stdio and over
// loopback HTTP (docs/safe-build.md#13).
func taskBench(r benchResults) error {
	tk, err := r.units("TaskPoll", "create-us", "create-get-us", "first-get-us", "poll-us", "status-us")
	if err != nil {
		return err
	}
	fmt.Printf("MCP tasks over stdio: reclazz_safe_build answered as a task in %.0f µs, its first tasks/get answered %.0f µs after the call was sent and %.0f µs after the client held the task (target < 1 ms), one tasks/get poll %.0f µs (target < 0.5 ms), a synchronous reclazz_status %.0f µs (medians, same server and agent; docs/safe-build.md#13)\n", tk[0], tk[1], tk[2], tk[3], tk[4])
	th, err := r.units("TaskHTTP", "create-us", "create-get-us", "first-get-us", "poll-us", "idle-poll-us", "status-us", "sdk-call-us", "ratio-poll")
	if err != nil {
		return err
	}
	fmt.Printf("MCP tasks over loopback HTTP, buildguard mcp --http a process of its own: reclazz_safe_build answered as a task in %.0f µs, its first tasks/get answered %.0f µs after the call was sent and %.0f µs after the client held the task (target < 1 ms), one tasks/get poll %.0f µs until the build completed and %.0f µs after it (target < 0.5 ms), a synchronous reclazz_status %.0f µs; the floor, one tools/call of go-sdk's stateless handler: %.0f µs, a poll after the build %.2f× that (medians; docs/safe-build.md#13)\n", th[0], th[1], th[2], th[3], th[4], th[5], th[6], th[7])
	return nil
}

// floorBench prints each row of docs/performance.md#1: buildguard against
// the cheapest program doing the same job on the same stack, both built as
// released, measured interleaved in the same run.
func floorBench(r benchResults) error {
	for _, row := range []struct {
		bench, what, ours, floor, unit, target string
	}{
		{"FloorSession", "stdio MCP session (start, initialize, tools/list, EOF) vs go-sdk stdio server with one tool", "session-ms", "floor-ms", "ms", "≤ 1.2×"},
		{"FloorStart", "buildguard mcp with immediate EOF vs the same floor", "eof-ms", "floor-ms", "ms", "≤ 1.2×"},
		{"FloorWrap", "wrapper overhead around true vs a Go program doing the same two BUILD round trips", "overhead-ms", "floor-ms", "ms", "≤ 1.2×"},
		{"FloorHTTPList", "HTTP tools/list, one keep-alive client, p50, vs go-sdk's stateless handler with ten trivial tools", "p50-us", "floor-p50-us", "µs", "≤ 1.2×"},
		{"FloorHTTPConcurrent", "HTTP tools/list, 16 keep-alive clients, floor req/s over ours", "req/s", "floor-req/s", "req/s", "≤ 1.2×"},
	} {
		v, err := r.units(row.bench, row.ours, row.floor, "ratio")
		if err != nil {
			return err
		}
		fmt.Printf("floor: %s: %.2f %s vs %.2f %s: %.2f× (target %s)\n", row.what, v[0], row.unit, v[1], row.unit, v[2], row.target)
	}
	v, err := r.units("FloorStart", "version-ms", "true-ms")
	if err != nil {
		return err
	}
	fmt.Printf("floor: buildguard version %.2f ms vs true %.2f ms (no target)\n", v[0], v[1])
	if v, err = r.units("FloorWrap", "sdk-link-ms", "ratio-sdk"); err != nil {
		return err
	}
	fmt.Printf("floor: the wrap floor linking go-sdk as the one binary does starts %.2f ms later; the wrapper's overhead against that floor: %.2f× (no target; docs/performance.md#4)\n", v[0], v[1])
	return nil
}

// proofBench prints the time from BUILD ok to the safe build's answer
// with every changed class verified, for 1 and for 512 classes against the
// fake agent (docs/safe-build.md#8).
func proofBench(r benchResults) error {
	for _, n := range []string{"1", "512"} {
		m, err := r.units("Proof/classes="+n, "ms-after-build-ok")
		if err != nil {
			return err
		}
		fmt.Printf("proof of %s changed classes (fake agent): %.1f ms from BUILD ok to the answer, every class verified\n", n, m[0])
	}
	return nil
}

// refAgentBench prints the proof with the reference JVM agent for 1 and
// 512 changed classes against the targets of issue 33, with the agent as
// it is and with TCP_NODELAY on its status socket
// (docs/performance.md#5.5).
func refAgentBench(r benchResults) error {
	met := map[bool]string{true: "met", false: "NOT met"}
	for _, agent := range []struct{ mode, what string }{
		{"default", "the reference JVM agent"},
		{"nodelay", "the reference JVM agent with TCP_NODELAY"},
	} {
		for _, c := range []struct {
			n      string
			target float64
		}{{"1", 100}, {"512", 2000}} {
			m, err := r.units("RefAgentProof/agent="+agent.mode+"/classes="+c.n, "ack-to-answer-ms", "worst-ms",
				"ack-to-batch-end-ms", "redefine-ms", "batch-end-to-answer-ms", "verify-round-ms", "ratio", "all-applied")
			if err != nil {
				return err
			}
			applied := map[bool]string{true: "every class verified applied", false: "NOT every class verified applied"}[m[7] == 1]
			fmt.Printf("proof of %s changed classes (%s): BUILD ok's acknowledgement to the answer %.1f ms median, %.1f ms worst (target ≤ %.0f ms: %s at the median, %s at the worst); the agent's batch ended %.1f ms after the acknowledgement (its redefinition %.0f ms as it reports it), the answer %.1f ms after that; one VERIFY round of the same classes %.1f ms; the answer %.2f× the batch's end plus that round; %s\n",
				c.n, agent.what, m[0], m[1], c.target, met[m[0] <= c.target], met[m[1] <= c.target], m[2], m[3], m[4], m[5], m[6], applied)
		}
	}
	return nil
}

// scaleBench prints the scale bench's rows (docs/performance.md#5): per
// generated project and change, the safe build next to the raw build, with
// the targets of the 20,000-class project beside its rows; then the cost of
// each scan per 10,000 class files, and of the kernel's report (Linux).
func scaleBench(r benchResults) error {
	for _, n := range []int{1000, 20000, 100000} {
		for _, k := range []string{"1", "512", "all"} {
			name := fmt.Sprintf("Scale/files=%d/change=%s", n, k)
			m, err := r.units(name, "raw-ms", "safe-ms", "extra-ms", "ratio", "before-hold-ms", "hold-ms",
				"raw-build-ms", "guarded-build-ms", "ok-to-answer-ms", "peak-MiB", "raw-peak-MiB", "changed", "all-applied", "own-ms", "rewriting-ratio")
			if err != nil {
				return err
			}
			applied := map[bool]string{true: "all verified applied", false: "not all verified applied"}[m[12] == 1]
			fmt.Printf("scale %d classes, change of %s: safe build %.0f ms vs raw %.0f ms: +%.0f ms, %.2f× (%s); beyond the rewriting %.0f ms, the rewriting %.2f× raw; start to BUILD started %.0f ms, BUILD started to ok %.0f ms (the rewriting itself %.1f ms guarded, %.1f ms raw), BUILD ok to the answer %.1f ms; peak RSS %.1f MiB (raw %.1f MiB); %.0f changed, %s\n",
				n, k, m[1], m[0], m[2], m[3], scaleTarget(n, k, m[0], m[1], m[9], m[13]), m[13], m[14], m[4], m[5], m[7], m[6], m[8], m[9], m[10], m[11], applied)
		}
	}
	for _, n := range []int{1000, 20000, 100000} {
		m, err := r.units(fmt.Sprintf("Scan/files=%d", n), "settled-ms/10k", "fresh-ms/10k", "changes-ms/10k")
		if err != nil {
			return err
		}
		fmt.Printf("scan of %d class files, per 10,000: %.1f ms settled (stat only), %.1f ms right after every one changed (each hashed as it is scanned), %.1f ms comparing two snapshots\n", n, m[0], m[1], m[2])
	}
	for _, n := range []int{1000, 20000, 100000} {
		m, err := r.units(fmt.Sprintf("Watch/files=%d", n), "start-ms/10k", "report-1-ms")
		if err != nil {
			return err
		}
		fmt.Printf("the kernel's report for %d class files: %.1f ms per 10,000 to watch and read every directory before the hold, %.2f ms to examine a 1-class change after the build\n", n, m[0], m[1])
	}
	return nil
}

// scaleTarget words the target of issue 33 for a row of the 20,000-class
// project and whether the row meets it; "no target" for the others. The
// change of every class is judged on the wall times and on the safe
// build's own time (own: beyond the raw build once each side's rewriting
// is taken out), since the pace of 20,000 rewrites moves by more than the
// 200 ms the target allows beyond 1.05×.
func scaleTarget(n int, k string, raw, safe, peak, own float64) string {
	met := map[bool]string{true: "met", false: "NOT met"}
	switch {
	case n == 20000 && k == "1":
		limit := 1.02*raw + 30
		return fmt.Sprintf("target ≤ 1.02× raw + 30 ms = %.0f ms: %s", limit, met[safe <= limit])
	case n == 20000 && k == "all":
		limit := 1.05*raw + 200
		return fmt.Sprintf("target ≤ 1.05× raw + 200 ms = %.0f ms: %s; beyond the rewriting ≤ %.0f ms: %s; peak ≤ 64 MiB: %s",
			limit, met[safe <= limit], limit-raw, met[own <= limit-raw], met[peak <= 64])
	}
	return "no target"
}

// diagnosticsBench prints the diagnostics parser's throughput and, per
// failing build of its corpus, the raw output against the text a failed
// reclazz_safe_build result answers with (docs/safe-build.md#12).
func diagnosticsBench(results benchResults) error {
	mbs, err := results.units("Parse", "MB/s")
	if err != nil {
		return err
	}
	fmt.Printf("diagnostics parser: %.0f MB/s over the corpus (target ≥ 100 MB/s)\n", mbs[0])
	names := []string{}
	for name := range results {
		if strings.HasPrefix(name, "FailedText/") {
			names = append(names, name)
		}
	}
	sort.Strings(names)
	for _, name := range names {
		raw, _ := benchMetric(results[name], "raw-bytes")
		text, _ := benchMetric(results[name], "text-bytes")
		ratio, _ := benchMetric(results[name], "x-smaller")
		fmt.Printf("failed safe build %s: %.0f bytes of output, %.0f bytes of result text: %.1f× smaller (target ≥ 10×)\n", strings.TrimPrefix(name, "FailedText/"), raw, text, ratio)
	}
	return nil
}
