//go:build linux

package integrations

import (
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/buildguard/buildguard/harness/fakeagent"
	"github.com/buildguard/buildguard/internal/testsupport/testbin"
)

// BenchmarkContinuousGradleCycle compares the cycles of one continuous
// Gradle 4.4.1 build (with its daemon) with and without buildguard
// --continuous around it (docs/decisions.md#D20): a comment edit to one
// source, then the time until Gradle says it waits for changes again, for
// cycles edits each. It reports the median cycle of each and their
// difference, the guard's per-cycle overhead (the target is at most 50 ms).
// Run it alone: go test ./integrations/ -run XXX -bench ContinuousGradleCycle -benchtime 1x
func BenchmarkContinuousGradleCycle(b *testing.B) {
	const cycles = 15
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

	measure := func(guarded bool) time.Duration {
		dir := filepath.Join(base, "project "+strconv.FormatBool(guarded))
		writeFiles(b, dir, map[string]string{
			"settings.gradle":        "rootProject.name = 'demo'\n",
			"build.gradle":           "apply plugin: 'java'\n",
			"src/main/java/p/A.java": "package p;\npublic class A {}\n",
			"gradle.properties":      "org.gradle.jvmargs=-Xmx256m\norg.gradle.daemon.idletimeout=180000\n",
		})
		argv := []string{"gradle", "--offline", "--continuous", "classes"}
		if guarded {
			argv = append([]string{exe, "--port-file", agent.PortFile(), "--continuous", "--"}, argv...)
		}
		r := startCommand(b, dir, home, argv)
		defer func() {
			r.cmd.Process.Signal(syscall.SIGINT)
			<-r.exited
		}()
		r.stdout.wait(b, "Waiting for changes to input files", 1, 3*time.Minute, r.stderr)
		var d []time.Duration
		for i := 1; i <= cycles; i++ {
			writeFiles(b, dir, map[string]string{"src/main/java/p/A.java": "package p;\npublic class A {} // " + strconv.Itoa(i) + "\n"})
			start := time.Now()
			r.stdout.wait(b, "Waiting for changes to input files", i+1, time.Minute, r.stderr)
			d = append(d, time.Since(start))
		}
		sort.Slice(d, func(i, j int) bool { return d[i] < d[j] })
		return d[len(d)/2]
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		plain := measure(false)
		guarded := measure(true)
		b.ReportMetric(float64(plain.Milliseconds()), "ms/cycle-plain")
		b.ReportMetric(float64(guarded.Milliseconds()), "ms/cycle-guarded")
		b.ReportMetric(float64((guarded - plain).Milliseconds()), "ms/cycle-overhead")
	}
}
