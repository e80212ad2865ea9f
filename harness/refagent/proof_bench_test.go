//go:build unix

package refagent_test

import (
	"cmp"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/buildguard/buildguard/agentproto"
	"github.com/buildguard/buildguard/harness/refagent"
	"github.com/buildguard/buildguard/service/safebuild"
)

// BenchmarkRefAgentProof measures the proof of a safe build against the
// reference agent in a live JVM that has loaded the 512 classes
// (docs/performance.md#5.5): each iteration is a safe build that rewrites
// 1 or 512 of them with bytes the JVM does not run, and the time is counted
// from the agent's acknowledgement of BUILD ok, as it passes a loopback
// proxy between buildguard and the agent, to the answer. Beside it, in the
// same iteration: when the agent's report that the batch ended passed the
// proxy, the milliseconds the agent says the batch took (its redefinition),
// and one VERIFY round of the same classes on a connection held open, the
// floor of any verification once the receipts are final. worst-ms is the
// slowest answer; all-applied is 1 when every answer said each class was
// verified applied and every round found it so; every other metric is a
// median over the iterations. It runs against
// the agent as it is (agent=default) and against the agent with
// TCP_NODELAY set on its status socket (agent=nodelay), each in a JVM of
// its own.
func BenchmarkRefAgentProof(b *testing.B) {
	for _, mode := range []struct {
		name    string
		noDelay bool
	}{{"default", false}, {"nodelay", true}} {
		b.Run("agent="+mode.name, func(b *testing.B) {
			f := startProofBench(b, mode.noDelay)
			for _, k := range []int{1, safebuild.MaxVerifiedClasses} {
				b.Run(fmt.Sprintf("classes=%d", k), func(b *testing.B) { f.run(b, k) })
			}
		})
	}
}

// startProofBench compiles two versions of classes C000 … C511 and starts
// a JVM with the reference agent that loads the first, and a proxy to its
// status socket; the JVM is killed when b ends.
func startProofBench(b *testing.B, noDelay bool) *proofBench {
	const n = safebuild.MaxVerifiedClasses
	jar := agentJar(b)
	java := requireTool(b, "java")
	root := b.TempDir()
	out := filepath.Join(root, "classes")
	appDir := filepath.Join(root, "app")
	portFile := filepath.Join(root, "agent.port")
	for _, d := range []string{out, appDir} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			b.Fatal(err)
		}
	}
	// Two versions of every class; each build writes the one the JVM does
	// not run, so that the agent reloads every class the build wrote.
	versions := [2]map[string][]byte{compileJava(b, classSources(n, 1)), compileJava(b, classSources(n, 2))}
	for name, data := range versions[0] {
		if err := os.WriteFile(filepath.Join(out, name), data, 0o644); err != nil {
			b.Fatal(err)
		}
	}
	loader := compileJava(b, map[string]string{"Loader.java": loaderApp})
	if err := os.WriteFile(filepath.Join(appDir, "Loader.class"), loader["Loader.class"], 0o644); err != nil {
		b.Fatal(err)
	}
	flag, err := refagent.AgentFlag(jar, refagent.Options{WatchDirs: []string{out}, PortFile: portFile, StartupDelaySec: 0, DebounceMs: 100, TCPNoDelay: noDelay})
	if err != nil {
		b.Fatal(err)
	}
	proc := startJVM(b, java, root, flag, "-cp", out+string(os.PathListSeparator)+appDir, "Loader", strconv.Itoa(n))
	log := lineLog{proc.Lines()}
	started := log.waitFor(b, 0, "saying the agent starts", func(s string) bool { return strings.Contains(s, "Reference agent ") })
	if line := log.since(started)[0]; strings.Contains(line, "TCP_NODELAY on") != noDelay {
		b.Fatalf("the agent started with TCPNoDelay %v, but said: %s", noDelay, line)
	}
	log.waitFor(b, 0, "LOADED 512", func(s string) bool { return s == "LOADED "+strconv.Itoa(n) })
	log.waitFor(b, 0, "with '] Watching '", func(s string) bool { return strings.Contains(s, "] Watching ") })
	portText, err := os.ReadFile(portFile)
	if err != nil {
		b.Fatal(err)
	}
	port, err := strconv.Atoi(string(portText))
	if err != nil {
		b.Fatal(err)
	}
	return &proofBench{
		proxy:   newBuildOKProxy(b, string(portText)),
		builder: safebuild.New(safebuild.Config{}),
		root:    root,
		out:     out,
		port:    port,
		version: make([]int, n),
		classes: versions,
	}
}

// proofBench is the live JVM and what BenchmarkRefAgentProof's builds
// share: the version of each class the JVM runs.
type proofBench struct {
	proxy     *buildOKProxy
	builder   *safebuild.Builder
	root, out string
	port      int
	version   []int                // per class, the index in classes of the bytes the JVM runs
	classes   [2]map[string][]byte // file name → bytes, per version
}

// proofRun is what one iteration measured.
type proofRun struct {
	answer, batchEnd, afterBatch, verifyRound, ratio float64 // ms, but ratio
	redefine                                         int     // ms, as the agent reported it
	applied                                          bool
}

func (f *proofBench) run(b *testing.B, k int) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	dctx, dcancel := context.WithTimeout(ctx, limit)
	floor, err := agentproto.Dial(dctx, f.port)
	dcancel()
	if err != nil {
		b.Fatal(err)
	}
	defer floor.Close()
	runs := make([]proofRun, 0, b.N)
	for i := 0; i < b.N; i++ {
		runs = append(runs, f.iteration(ctx, b, floor, k))
	}
	median := func(v func(r proofRun) float64) float64 {
		vs := make([]float64, len(runs))
		for i, r := range runs {
			vs[i] = v(r)
		}
		slices.Sort(vs)
		if len(vs)%2 == 0 {
			return (vs[len(vs)/2-1] + vs[len(vs)/2]) / 2
		}
		return vs[len(vs)/2]
	}
	applied := 1.0
	for _, r := range runs {
		if !r.applied {
			applied = 0
		}
	}
	b.ReportMetric(median(func(r proofRun) float64 { return r.answer }), "ack-to-answer-ms")
	b.ReportMetric(slices.MaxFunc(runs, func(x, y proofRun) int { return cmp.Compare(x.answer, y.answer) }).answer, "worst-ms")
	b.ReportMetric(median(func(r proofRun) float64 { return r.batchEnd }), "ack-to-batch-end-ms")
	b.ReportMetric(median(func(r proofRun) float64 { return float64(r.redefine) }), "redefine-ms")
	b.ReportMetric(median(func(r proofRun) float64 { return r.afterBatch }), "batch-end-to-answer-ms")
	b.ReportMetric(median(func(r proofRun) float64 { return r.verifyRound }), "verify-round-ms")
	b.ReportMetric(median(func(r proofRun) float64 { return r.ratio }), "ratio")
	b.ReportMetric(applied, "all-applied")
}

// iteration runs one safe build that rewrites classes C000 … C<k-1> with
// the bytes the JVM does not run, then one VERIFY round of them on floor.
func (f *proofBench) iteration(ctx context.Context, b *testing.B, floor *agentproto.Conn, k int) proofRun {
	src := b.TempDir()
	queries := make([]agentproto.VerifyQuery, k)
	for j := range k {
		f.version[j] = 1 - f.version[j]
		name := fmt.Sprintf("C%03d", j)
		data := f.classes[f.version[j]][name+".class"]
		if err := os.WriteFile(filepath.Join(src, name+".class"), data, 0o644); err != nil {
			b.Fatal(err)
		}
		queries[j] = agentproto.VerifyQuery{Class: name, SHA256: sha(data)}
	}
	f.proxy.expect(k)
	bctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	res := f.builder.Run(bctx, safebuild.Request{
		Dir:      f.root,
		Build:    safebuild.Build{Name: "copy", Command: []string{"cp", "-R", src + "/.", f.out}, Timeout: time.Minute},
		Endpoint: agentproto.Endpoint{Port: f.proxy.port()},
	})
	answered := time.Now()
	cancel()
	ackAt, reportAt, reportMs := f.proxy.noted()
	if ackAt.IsZero() || reportAt.IsZero() {
		b.Fatalf("the proxy saw no acknowledgement of BUILD ok (%v) or no report of the batch (%v): %s", ackAt, reportAt, res.Detail)
	}
	cc := res.ChangedClasses
	r := proofRun{
		answer:     ms(answered.Sub(ackAt)),
		batchEnd:   ms(reportAt.Sub(ackAt)),
		afterBatch: ms(answered.Sub(reportAt)),
		redefine:   reportMs,
		applied:    res.Outcome == safebuild.OutcomeOK && cc.Count == k && cc.Complete && cc.AllApplied,
	}
	vctx, vcancel := context.WithTimeout(ctx, limit)
	defer vcancel()
	start := time.Now()
	if _, err := floor.VerifyAll(vctx, queries, func(_ int, rec *agentproto.Receipt) error {
		r.applied = r.applied && rec.Status == agentproto.ReceiptApplied
		return nil
	}); err != nil {
		b.Fatalf("the VERIFY round after the safe build: %v (the safe build said: %s)", err, res.Detail)
	}
	r.verifyRound = ms(time.Since(start))
	r.ratio = r.answer / (max(r.batchEnd, 0) + r.verifyRound)
	return r
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
