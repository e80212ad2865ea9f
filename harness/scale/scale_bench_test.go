//go:build linux

package scale

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/buildguard/buildguard/harness/fakeagent"
	"github.com/buildguard/buildguard/internal/testsupport/testbin"
)

const (
	// benchPackages is the number of packages of every project the bench
	// generates.
	benchPackages = 100
	// receipts is what an agent keeps receipts for, and what a safe build
	// verifies at most (docs/agent-protocol.md#8).
	receipts = fakeagent.MaxReceipts
	// settleAfter is how long after a class file was written the search
	// for changed classes stops hashing it while it scans
	// (docs/safe-build.md#8: 2 s), with a margin for the file system's
	// clock.
	settleAfter = 2*time.Second + 200*time.Millisecond
)

// sideRun is one run of a build under GNU time.
type sideRun struct {
	start    time.Time
	wall     time.Duration
	peakKiB  float64   // wait4's ru_maxrss of the command, as GNU time reports it
	stdout   string    // everything it printed on stdout
	result   string    // the line of stdout that starts with {"outcome" ("" if none)
	resultAt time.Time // when that line arrived
}

// runTimed runs argv in dir under GNU time (-f %M) and returns its wall
// time, its peak RSS, its output and the result line it printed. GNU time forks a
// small process before exec, so the peak is the command's own (or that of
// the largest child it waited for), never the pages of this test process,
// which a child started from here would count (its exec replaces a copy of
// this process's address space). The file systems are synced first, so
// that neither side pays for the other's writes.
func runTimed(b *testing.B, timeBin, dir string, argv ...string) sideRun {
	b.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, timeBin, append([]string{"-f", "%M"}, argv...)...)
	cmd.Dir = dir
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		b.Fatal(err)
	}
	var r sideRun
	syscall.Sync()
	r.start = time.Now()
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	sc := bufio.NewScanner(stdout)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		r.stdout += sc.Text() + "\n"
		if strings.HasPrefix(sc.Text(), `{"outcome"`) {
			r.result, r.resultAt = sc.Text(), time.Now()
		}
	}
	err = cmd.Wait()
	r.wall = time.Since(r.start)
	if err != nil {
		b.Fatalf("%s: %v\n%s", strings.Join(argv, " "), err, stderr.String())
	}
	lines := strings.Split(strings.TrimSpace(stderr.String()), "\n")
	if r.peakKiB, err = strconv.ParseFloat(lines[len(lines)-1], 64); err != nil {
		b.Fatalf("GNU time printed no peak after %s:\n%s", strings.Join(argv, " "), stderr.String())
	}
	return r
}

// settle waits until the class files written at last are older than the
// window within which the search for changed classes hashes what it scans:
// the developer's previous build ended more than two seconds before the
// next, so the scan before the hold reads no file. The wait is for the
// clock itself, bounded by settleAfter.
func settle(last time.Time) {
	if d := time.Until(last.Add(settleAfter)); d > 0 {
		time.Sleep(d)
	}
}

// scaleAgent is the fake agent of one generated project: it watches the
// project's output directory (DOCTOR), notes when BUILD started and BUILD
// ok reach it, and on the capture after BUILD ok reloads the classes the
// build changed, as one batch whose receipts end applied.
type scaleAgent struct {
	*fakeagent.Server
	mu              sync.Mutex
	startedAt, okAt time.Time
	batch           []fakeagent.BatchEntry
}

func newScaleAgent(b *testing.B, p Project) *scaleAgent {
	a := &scaleAgent{}
	a.Server = fakeagent.NewServer(b,
		fakeagent.WithHeartbeat(-1),
		fakeagent.WithPortFile(filepath.Join(p.Dir, ".reclazz", "agent.port")),
		fakeagent.WithDoctor(fakeagent.Evidence{WatchedDirectories: []string{p.OutputDir()}}),
		fakeagent.WithConfigFunc(func(c *fakeagent.Config) {
			c.OnCommand = func(_ int, line string) {
				now := time.Now()
				a.mu.Lock()
				defer a.mu.Unlock()
				switch {
				case strings.HasPrefix(line, "BUILD started "):
					a.startedAt = now
				case strings.HasPrefix(line, "BUILD ok "):
					a.okAt = now
				}
			}
		}),
		fakeagent.WithAcceptance(func(context.Context, string) fakeagent.Outcome {
			a.mu.Lock()
			batch := a.batch
			a.mu.Unlock()
			a.StartBatch(batch...).Finish(fakeagent.StatusApplied, "Reload applied; the JVM accepted the new bytes")
			return fakeagent.AcceptSuccess
		}),
	)
	return a
}

// expect sets the batch the agent reloads after the next BUILD ok: the
// classes of Changed(k) with the bytes of run, in the order the build wrote
// them. The ledger keeps the receipts of the last `receipts` classes of a
// batch, so only those are handed to it: the receipts it then holds are
// the same as after the whole batch, and the fake's own cost stays small.
// The hashes are taken here, before the build, outside what is measured.
func (a *scaleAgent) expect(p Project, k, run int) {
	changed := p.Changed(k)
	changed = changed[max(0, len(changed)-receipts):]
	batch := make([]fakeagent.BatchEntry, len(changed))
	for j, i := range changed {
		batch[j] = fakeagent.BatchEntry{Class: p.ClassName(i), Source: p.Path(i), SHA256: ClassSHA256(p.ClassName(i), run)}
	}
	a.mu.Lock()
	a.batch, a.startedAt, a.okAt = batch, time.Time{}, time.Time{}
	a.mu.Unlock()
}

func (a *scaleAgent) marks() (started, ok time.Time) {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.startedAt, a.okAt
}

// safeResult is the part of the safe build's result the bench checks.
type safeResult struct {
	Outcome        string `json:"outcome"`
	Detail         string `json:"detail"`
	ChangedClasses struct {
		Count      int  `json:"count"`
		Complete   bool `json:"complete"`
		AllApplied bool `json:"allApplied"`
	} `json:"changedClasses"`
	Output struct {
		LogFile string `json:"logFile"`
	} `json:"output"`
}

// readLog is the build's log a safe build wrote: the result's tail may be
// cut to fit the result's bound.
func readLog(b *testing.B, path string) string {
	data, err := os.ReadFile(path)
	if err != nil {
		b.Fatalf("reading the safe build's log: %v", err)
	}
	return string(data)
}

// selfTimed matches the time cmd/scalebuild says its rewriting took.
var selfTimed = regexp.MustCompile(`compiled \d+ of \d+ classes \(run \d+\) in ([0-9.]+) ms`)

// buildMs is the time the raw build says its rewriting took, in its output.
func buildMs(b *testing.B, output string) float64 {
	m := selfTimed.FindStringSubmatch(output)
	if m == nil {
		b.Fatalf("the build printed no time of its own: %q", output)
	}
	v, _ := strconv.ParseFloat(m[1], 64)
	return v
}

func msOf(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// median is the middle of xs, or the mean of its two middle values.
func median(xs []float64) float64 {
	xs = slices.Clone(xs)
	slices.Sort(xs)
	if len(xs)%2 == 0 {
		return (xs[len(xs)/2-1] + xs[len(xs)/2]) / 2
	}
	return xs[len(xs)/2]
}

// BenchmarkScale runs, per generated project (1,000, 20,000 and 100,000
// class files in 100 packages) and change (1, 512 and every class), the raw
// build (cmd/scalebuild rewriting the changed class files) and the same
// build through `buildguard build run` against the fake agent watching the
// output directory, alternating in each iteration, both under GNU time
// (docs/performance.md#5). Before each safe build the files the raw build
// (or the generator) wrote are let settle (settle), as between two builds
// of a developer; the raw build scans nothing and needs no wait.
// It reports the medians of each side, of the safe build's time beyond
// the raw build's and of their ratio; the safe build's own time (its time
// beyond the raw build's once each side's rewriting, as cmd/scalebuild
// times it, is taken out: the part the disk's pace does not move) and the
// ratio of the rewriting under buildguard to the raw one; the time from
// the safe build's start
// to BUILD started reaching the agent (start-up, the build queue, DOCTOR,
// the scan before the hold); from BUILD started to BUILD ok reaching the
// agent (the build and the search after it); from BUILD ok reaching the
// agent to the result line on stdout (the proof); the time the rewriting
// itself took, as cmd/scalebuild says, in the raw build and in the
// guarded one; the
// largest peak RSS of each side; the changed classes the result counted
// and whether every one was verified applied.
func BenchmarkScale(b *testing.B) {
	timeBin, err := exec.LookPath("time")
	if err != nil {
		b.Fatalf("GNU time is needed to measure peak RSS (apt-get install -y time): %v", err)
	}
	bins := b.TempDir()
	bin := testbin.Build(b, bins)
	scalebuild := testbin.BuildPackage(b, bins, "github.com/buildguard/buildguard/harness/scale/cmd/scalebuild")
	for _, n := range []int{1000, 20000, 100000} {
		b.Run(fmt.Sprintf("files=%d", n), func(b *testing.B) {
			p := Project{Dir: b.TempDir(), Classes: n, Packages: benchPackages}
			if err := p.Generate(); err != nil {
				b.Fatal(err)
			}
			agent := newScaleAgent(b, p)
			run := 0
			for _, k := range []int{1, receipts, n} {
				name := strconv.Itoa(k)
				if k == n {
					name = "all"
				}
				b.Run("change="+name, func(b *testing.B) {
					var raw, safe, extra, ratio, before, hold, answer, rawBuild, guardedBuild, own, rewriting []float64
					var peak, rawPeak float64
					var res safeResult
					for b.Loop() {
						run++
						syscall.Sync() // neither side writes beside the other's writeback
						r := runTimed(b, timeBin, p.Dir, append([]string{scalebuild}, p.BuildArgs(k, run)...)...)
						settle(time.Now())
						run++
						if err := p.Configure(scalebuild, k, run); err != nil {
							b.Fatal(err)
						}
						agent.expect(p, k, run)
						syscall.Sync()
						s := runTimed(b, timeBin, p.Dir, bin, "build", "run")
						started, ok := agent.marks()
						res = safeResult{}
						if err := json.Unmarshal([]byte(s.result), &res); err != nil || res.Outcome != "ok" || started.IsZero() || ok.IsZero() {
							b.Fatalf("safe build of %d changed classes: %v\n%s", k, err, s.result)
						}
						if res.ChangedClasses.Count != k || !res.ChangedClasses.Complete {
							b.Fatalf("safe build of %d changed classes counted %d (complete %v): %s", k, res.ChangedClasses.Count, res.ChangedClasses.Complete, res.Detail)
						}
						if k <= receipts && !res.ChangedClasses.AllApplied {
							b.Fatalf("safe build of %d changed classes: not all applied: %s", k, res.Detail)
						}
						raw, safe = append(raw, msOf(r.wall)), append(safe, msOf(s.wall))
						extra, ratio = append(extra, msOf(s.wall-r.wall)), append(ratio, float64(s.wall)/float64(r.wall))
						before, hold, answer = append(before, msOf(started.Sub(s.start))), append(hold, msOf(ok.Sub(started))), append(answer, msOf(s.resultAt.Sub(ok)))
						rb, gb := buildMs(b, r.stdout), buildMs(b, readLog(b, res.Output.LogFile))
						rawBuild, guardedBuild = append(rawBuild, rb), append(guardedBuild, gb)
						own, rewriting = append(own, (msOf(s.wall)-gb)-(msOf(r.wall)-rb)), append(rewriting, gb/rb)
						peak, rawPeak = max(peak, s.peakKiB/1024), max(rawPeak, r.peakKiB/1024)
					}
					b.ReportMetric(median(raw), "raw-ms")
					b.ReportMetric(median(safe), "safe-ms")
					b.ReportMetric(median(extra), "extra-ms")
					b.ReportMetric(median(ratio), "ratio")
					b.ReportMetric(median(before), "before-hold-ms")
					b.ReportMetric(median(hold), "hold-ms")
					b.ReportMetric(median(rawBuild), "raw-build-ms")
					b.ReportMetric(median(guardedBuild), "guarded-build-ms")
					b.ReportMetric(median(answer), "ok-to-answer-ms")
					b.ReportMetric(median(own), "own-ms")
					b.ReportMetric(median(rewriting), "rewriting-ratio")
					b.ReportMetric(peak, "peak-MiB")
					b.ReportMetric(rawPeak, "raw-peak-MiB")
					b.ReportMetric(float64(res.ChangedClasses.Count), "changed")
					b.ReportMetric(map[bool]float64{true: 1}[res.ChangedClasses.AllApplied], "all-applied")
				})
			}
		})
	}
}
