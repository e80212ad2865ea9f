//go:build linux

package integrations

import (
	"context"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/buildguard/buildguard/harness/fakeagent"
	"github.com/buildguard/buildguard/integrations/gradle"
	"github.com/buildguard/buildguard/internal/cycle"
	"github.com/buildguard/buildguard/internal/testsupport/testbin"
)

// BenchmarkContinuousGradleCycle compares the cycles of a continuous Gradle
// 4.4.1 build with and without buildguard --continuous around it
// (docs/decisions.md#D20): a comment edit to one source, then the time
// until Gradle says it waits for changes again. It reports the median
// cycle of each and their difference, the guard's per-cycle overhead (the
// target is at most 50 ms). A third setup takes that difference apart:
// plain Gradle with the cycle init script and a channel (internal/cycle)
// that this benchmark answers at once, with no agent and no build queue;
// it costs what the script costs inside Gradle.
//
// The setups use one Gradle daemon, warmed before anything is measured,
// and take turns in rounds (each round starts with the next setup), so
// none gets a colder daemon or a quieter stretch of the machine; the first
// cycles of each continuous run are not counted (the daemon's caches for
// that project warm up in them).
// Run it alone: go test ./integrations/ -run XXX -bench ContinuousGradleCycle -benchtime 1x
func BenchmarkContinuousGradleCycle(b *testing.B) {
	const (
		rounds  = 4
		warm    = 3 // cycles of each run not counted
		counted = 8 // cycles of each run counted
	)
	for _, tool := range []string{"gradle", "java", "go"} {
		if _, err := exec.LookPath(tool); err != nil {
			b.Fatalf("%s not found: %s", tool, installHint)
		}
	}
	base, err := filepath.EvalSymlinks(b.TempDir())
	if err != nil {
		b.Fatal(err)
	}
	exe := testbin.Build(b, filepath.Join(base, "bin"))
	home := filepath.Join(base, "gradle home")
	b.Cleanup(func() { stopGradleDaemons(b, home) })
	agent := fakeagent.NewServer(b)

	edits := 0
	// run starts one continuous build of the setup's project and returns
	// its counted cycles.
	run := func(setup string) []time.Duration {
		dir := filepath.Join(base, "project "+setup)
		writeFiles(b, dir, map[string]string{
			"settings.gradle":        "rootProject.name = 'demo'\n",
			"build.gradle":           "apply plugin: 'java'\n",
			"src/main/java/p/A.java": "package p;\npublic class A {}\n",
			"gradle.properties":      "org.gradle.jvmargs=-Xmx256m\norg.gradle.daemon.idletimeout=180000\n",
		})
		argv := []string{"gradle", "--offline", "--continuous", "classes"}
		switch setup {
		case "guarded":
			argv = append([]string{exe, "--port-file", agent.PortFile(), "--continuous", "--"}, argv...)
		case "script":
			ch := answerCycles(b)
			defer ch.Close()
			argv = ch.Argv(argv)
		}
		r := startCommand(b, dir, home, argv)
		defer func() {
			r.cmd.Process.Signal(syscall.SIGINT)
			<-r.exited
		}()
		r.stdout.wait(b, "Waiting for changes to input files", 1, 3*time.Minute, r.stderr)
		var d []time.Duration
		for i := 1; i <= warm+counted; i++ {
			edits++
			writeFiles(b, dir, map[string]string{"src/main/java/p/A.java": "package p;\npublic class A {} // " + strconv.Itoa(edits) + "\n"})
			start := time.Now()
			r.stdout.wait(b, "Waiting for changes to input files", i+1, time.Minute, r.stderr)
			if i > warm {
				d = append(d, time.Since(start))
			}
		}
		return d
	}
	sorted := func(d []time.Duration) []time.Duration {
		d = append([]time.Duration(nil), d...)
		sort.Slice(d, func(i, j int) bool { return d[i] < d[j] })
		for i := range d {
			d[i] = d[i].Round(time.Millisecond)
		}
		return d
	}
	median := func(d []time.Duration) time.Duration { return sorted(d)[len(d)/2] }
	setups := []string{"plain", "guarded", "script"}
	run("plain") // warms the daemon the setups share
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		cycles := map[string][]time.Duration{}
		for r := 0; r < rounds; r++ {
			for k := range setups {
				s := setups[(r+k)%len(setups)]
				cycles[s] = append(cycles[s], run(s)...)
			}
		}
		p, g, sc := median(cycles["plain"]), median(cycles["guarded"]), median(cycles["script"])
		b.Logf("cycles plain %v, guarded %v, script only %v; %d daemons", sorted(cycles["plain"]), sorted(cycles["guarded"]), sorted(cycles["script"]), len(gradleDaemons(b, home)))
		b.ReportMetric(float64(p.Milliseconds()), "ms/cycle-plain")
		b.ReportMetric(float64(g.Milliseconds()), "ms/cycle-guarded")
		b.ReportMetric(float64((g - p).Milliseconds()), "ms/cycle-overhead")
		b.ReportMetric(float64((sc - p).Milliseconds()), "ms/cycle-script")
	}
}

// answerCycles opens a cycle channel (the one buildguard --continuous
// opens) and answers every cycle at once: ack, then released, with no
// agent and no build queue behind it.
func answerCycles(b *testing.B) *cycle.Channel {
	ch, err := cycle.Open(cycle.Config{Script: gradle.CyclesInitScript})
	if err != nil {
		b.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	b.Cleanup(func() {
		cancel()
		<-done
	})
	go func() {
		defer close(done)
		for n := 1; ; n++ {
			cy, err := ch.Next(ctx)
			if err != nil {
				return
			}
			if cy.Ack(n) != nil {
				cy.Close()
				continue
			}
			res, err := cy.Result(ctx)
			if err != nil {
				cy.Close()
				return
			}
			cy.Finish(n, res == cycle.OK)
		}
	}()
	return ch
}
