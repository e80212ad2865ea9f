//go:build unix

package main

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/buildguard/buildguard/harness/fakeagent"
	"github.com/buildguard/buildguard/internal/testsupport/testbin"
	"github.com/buildguard/buildguard/internal/testsupport/wait"
)

// The floor benchmarks measure buildguard against the cheapest programs
// that do the same job on the same stack (harness/floor, built from the
// go-sdk version go.mod pins), both built as released, in the same run and
// interleaved: each iteration runs every side once, in an order that
// rotates, so machine load falls on both alike (docs/performance.md#1).

const floorPkg = "github.com/buildguard/buildguard/harness/floor/"

// rotate runs fns once each, starting at fns[i%len(fns)].
func rotate(i int, fns ...func()) {
	for k := range fns {
		fns[(i+k)%len(fns)]()
	}
}

// timed runs cmd to its end and returns its wall time, failing b when it
// fails or runs for more than 30 s (then it is killed).
func timed(b *testing.B, cmd *exec.Cmd) time.Duration {
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	start := time.Now()
	if err := cmd.Start(); err != nil {
		b.Fatalf("%v: %v", cmd.Args, err)
	}
	bound := time.AfterFunc(30*time.Second, func() { cmd.Process.Kill() })
	err := cmd.Wait()
	elapsed := time.Since(start)
	if !bound.Stop() {
		b.Fatalf("%v: still running after 30 s, killed\n%s", cmd.Args, stderr.String())
	}
	if err != nil {
		b.Fatalf("%v: %v\n%s", cmd.Args, err, stderr.String())
	}
	return elapsed
}

// report reports the median of each side in ms and their ratio.
func report(b *testing.B, ours, floor []time.Duration, unit string) {
	o, f := median(ours), median(floor)
	b.ReportMetric(ms(o), unit+"-ms")
	b.ReportMetric(ms(f), "floor-ms")
	b.ReportMetric(o.Seconds()/f.Seconds(), "ratio")
}

var sessionInput = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"bench","version":"1"}}}` + "\n" +
	`{"jsonrpc":"2.0","method":"notifications/initialized"}` + "\n" +
	`{"jsonrpc":"2.0","id":2,"method":"tools/list"}` + "\n"

// session runs one stdio session of argv: initialize, tools/list, and EOF
// once the tools/list answer arrived (go-sdk's own stdio transport drops
// answers still in flight at EOF, so closing earlier would make the floor
// skip work), and returns its wall time from start to exit.
func session(b *testing.B, argv ...string) time.Duration {
	cmd := exec.Command(argv[0], argv[1:]...)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		b.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		b.Fatal(err)
	}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	start := time.Now()
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	defer cmd.Process.Kill() // only when a check below fails
	bound := time.AfterFunc(30*time.Second, func() { cmd.Process.Kill() })
	defer bound.Stop()
	if _, err := io.WriteString(stdin, sessionInput); err != nil {
		b.Fatal(err)
	}
	lines := bufio.NewReader(stdout)
	for {
		line, err := lines.ReadString('\n')
		if err != nil {
			b.Fatalf("%v: no tools/list answer (%v)\n%s", argv, err, stderr.String())
		}
		if strings.HasPrefix(line, `{"jsonrpc":"2.0","id":2,"result":{`) && strings.Contains(line, `"tools":[{`) {
			break
		}
	}
	stdin.Close()
	io.Copy(io.Discard, lines)
	if err := cmd.Wait(); err != nil {
		b.Fatalf("%v: %v\n%s", argv, err, stderr.String())
	}
	return time.Since(start)
}

// BenchmarkFloorSession: one stdio session (start, initialize, tools/list,
// EOF) of `buildguard mcp` against a go-sdk stdio server with one tool.
// Target: ratio ≤ 1.2.
func BenchmarkFloorSession(b *testing.B) {
	dir := b.TempDir()
	bin, floor := testbin.Build(b, dir), testbin.BuildPackage(b, dir, floorPkg+"stdio")
	var ours, base []time.Duration
	for i := 0; b.Loop(); i++ {
		rotate(i,
			func() { ours = append(ours, session(b, bin, "mcp")) },
			func() { base = append(base, session(b, floor)) })
	}
	report(b, ours, base, "session")
}

// BenchmarkFloorStart: `buildguard mcp` with stdin at EOF at once against
// the same floor with the same stdin (target: ratio ≤ 1.2), and, in the
// same iterations, `buildguard version` against `true` (no target: the
// cost of a start that does nothing).
func BenchmarkFloorStart(b *testing.B) {
	dir := b.TempDir()
	bin, floor := testbin.Build(b, dir), testbin.BuildPackage(b, dir, floorPkg+"stdio")
	truePath, err := exec.LookPath("true")
	if err != nil {
		b.Fatal(err)
	}
	var eof, floorEOF, version, bare []time.Duration
	for i := 0; b.Loop(); i++ {
		rotate(i,
			func() { eof = append(eof, timed(b, exec.Command(bin, "mcp"))) },
			func() { floorEOF = append(floorEOF, timed(b, exec.Command(floor))) },
			func() { version = append(version, timed(b, exec.Command(bin, "version"))) },
			func() { bare = append(bare, timed(b, exec.Command(truePath))) })
	}
	report(b, eof, floorEOF, "eof")
	b.ReportMetric(ms(median(version)), "version-ms")
	b.ReportMetric(ms(median(bare)), "true-ms")
}

// BenchmarkFloorWrap: the wrapper's overhead around `true` (hold and
// release on the fake agent, a real loopback server) against a Go program
// that dials the same agent and does the same two BUILD round trips around
// the same `true` (wrap). Each side's overhead is its median minus the
// median of a bare `true` run in the same iterations. Target: ratio ≤ 1.2.
// In the same iterations, the same floor in a program that also links
// go-sdk (wrapsdk), as the one binary does: ratio-sdk is the wrapper against
// that, and sdk-link-ms what linking go-sdk alone adds to the floor
// (docs/performance.md#4).
func BenchmarkFloorWrap(b *testing.B) {
	dir := b.TempDir()
	bin, floor := testbin.Build(b, dir), testbin.BuildPackage(b, dir, floorPkg+"wrap")
	floorSDK := testbin.BuildPackage(b, dir, floorPkg+"wrapsdk")
	agent := fakeagent.NewServer(b, fakeagent.WithHeartbeat(-1))
	truePath, err := exec.LookPath("true")
	if err != nil {
		b.Fatal(err)
	}
	// The wrapper admits its build through the project's queue in the
	// working directory's .buildguard/ (docs/decisions.md#D18): a directory
	// of the benchmark's, not the source tree.
	project := b.TempDir()
	var ours, base, withSDK, bare []time.Duration
	for i := 0; b.Loop(); i++ {
		rotate(i,
			func() {
				cmd := exec.Command(bin, "--port-file", agent.PortFile(), "--owner", "bench", "--", truePath)
				cmd.Dir = project
				ours = append(ours, timed(b, cmd))
			},
			func() { base = append(base, timed(b, exec.Command(floor, agent.PortFile(), truePath))) },
			func() { withSDK = append(withSDK, timed(b, exec.Command(floorSDK, agent.PortFile(), truePath))) },
			func() { bare = append(bare, timed(b, exec.Command(truePath))) })
	}
	t := median(bare)
	o, f, fs := median(ours)-t, median(base)-t, median(withSDK)-t
	b.ReportMetric(ms(o), "overhead-ms")
	b.ReportMetric(ms(f), "floor-ms")
	b.ReportMetric(ms(t), "true-ms")
	b.ReportMetric(o.Seconds()/f.Seconds(), "ratio")
	b.ReportMetric(ms(fs-f), "sdk-link-ms")
	b.ReportMetric(o.Seconds()/fs.Seconds(), "ratio-sdk")
}

// httpServer is one MCP server over streamable HTTP on loopback, started
// as a process, and a keep-alive client of it.
type httpServer struct {
	url    string
	client *http.Client
}

// startHTTP starts argv, which writes its URL into urlFile, and returns it
// once the URL is there; the process is killed when b ends.
func startHTTP(b *testing.B, urlFile string, argv ...string) *httpServer {
	cmd := exec.Command(argv[0], argv[1:]...) // stderr (our URL line carries the token) to /dev/null
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	tr := &http.Transport{MaxIdleConnsPerHost: 32}
	b.Cleanup(func() { cmd.Process.Kill(); cmd.Wait(); tr.CloseIdleConnections() })
	var url string
	wait.For(b, 10*time.Second, argv[0]+" writes its URL", func() bool {
		data, err := os.ReadFile(urlFile)
		url = strings.TrimSpace(string(data))
		return err == nil && strings.HasSuffix(string(data), "\n")
	})
	return &httpServer{url: url, client: &http.Client{Transport: tr, Timeout: 20 * time.Second}}
}

// startHTTPPair starts `buildguard mcp --http` and the floor's stateless
// go-sdk handler with ten trivial tools.
func startHTTPPair(b *testing.B) (ours, floor *httpServer) {
	dir := b.TempDir()
	bin, floorBin := testbin.Build(b, dir), testbin.BuildPackage(b, dir, floorPkg+"http")
	ours = startHTTP(b, filepath.Join(dir, "url"), bin, "mcp", "--http", "127.0.0.1:0", "--url-file", filepath.Join(dir, "url"))
	floor = startHTTP(b, filepath.Join(dir, "floor-url"), floorBin, filepath.Join(dir, "floor-url"))
	return ours, floor
}

// list sends one tools/list as a 2025-11-25 client does and checks the
// answer.
func (s *httpServer) list(b *testing.B, id int) error {
	req, err := http.NewRequest(http.MethodPost, s.url, strings.NewReader(fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/list"}`, id)))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("MCP-Protocol-Version", "2025-11-25")
	resp, err := s.client.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	out, err := io.ReadAll(resp.Body)
	if err != nil || resp.StatusCode != http.StatusOK || !bytes.Contains(out, []byte(`"tools":[`)) {
		return fmt.Errorf("%s: HTTP %d: %.200s (%v)", s.url, resp.StatusCode, out, err)
	}
	return nil
}

// BenchmarkFloorHTTPList: one tools/list over one keep-alive connection,
// buildguard against the floor, alternating; medians (p50). Target: ratio ≤ 1.2.
func BenchmarkFloorHTTPList(b *testing.B) {
	ours, floor := startHTTPPair(b)
	one := func(s *httpServer, id int, into *[]time.Duration) {
		start := time.Now()
		if err := s.list(b, id); err != nil {
			b.Fatal(err)
		}
		*into = append(*into, time.Since(start))
	}
	one(ours, 0, new([]time.Duration)) // open both connections first
	one(floor, 0, new([]time.Duration))
	var o, f []time.Duration
	for i := 0; b.Loop(); i++ {
		rotate(i, func() { one(ours, i+1, &o) }, func() { one(floor, i+1, &f) })
	}
	o50, f50 := median(o), median(f)
	b.ReportMetric(float64(o50.Microseconds()), "p50-us")
	b.ReportMetric(float64(f50.Microseconds()), "floor-p50-us")
	b.ReportMetric(o50.Seconds()/f50.Seconds(), "ratio")
}

// floorClients is how many keep-alive clients BenchmarkFloorHTTPConcurrent
// runs at once, and floorRound how many requests each sends per round.
const floorClients, floorRound = 16, 25

// BenchmarkFloorHTTPConcurrent: each iteration is one round of 16
// keep-alive clients sending 25 tools/list each to buildguard and one to
// the floor, in turn; it reports the median requests per second of each
// and the floor's over buildguard's (target: ≤ 1.2).
func BenchmarkFloorHTTPConcurrent(b *testing.B) {
	ours, floor := startHTTPPair(b)
	round := func(s *httpServer) float64 {
		var wg sync.WaitGroup
		errs := make(chan error, floorClients)
		start := time.Now()
		for c := range floorClients {
			wg.Go(func() {
				for r := range floorRound {
					if err := s.list(b, c*floorRound+r); err != nil {
						errs <- err
						return
					}
				}
			})
		}
		wg.Wait()
		elapsed := time.Since(start)
		close(errs)
		if err := <-errs; err != nil {
			b.Fatal(err)
		}
		return floorClients * floorRound / elapsed.Seconds()
	}
	round(ours) // open the connections first
	round(floor)
	var o, f []float64
	for i := 0; b.Loop(); i++ {
		rotate(i, func() { o = append(o, round(ours)) }, func() { f = append(f, round(floor)) })
	}
	or, fr := median(o), median(f)
	b.ReportMetric(or, "req/s")
	b.ReportMetric(fr, "floor-req/s")
	b.ReportMetric(fr/or, "ratio")
}
