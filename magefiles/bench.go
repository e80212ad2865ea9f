//go:build mage

package main

import (
	"fmt"
	"regexp"
	"strconv"

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

// Bench measures the build wrapper against a baseline taken in the same run
// and prints the ratios: the median overhead of `buildguard -- true` over a
// bare `true` (target under 5 ms), and the throughput of a child writing
// 256 MiB through the wrapper relative to writing directly (targets: pipes
// ≥ 0.9×, pty ≥ 0.5×).
func Bench() error {
	results := map[string]string{}
	for _, run := range []struct{ pattern, benchtime string }{
		{"^BenchmarkOverhead$", "50x"},
		{"^BenchmarkPassthrough$", "3x"},
	} {
		out, err := sh.Output("go", "test", "-run", "^$", "-bench", run.pattern, "-benchtime", run.benchtime, "./cmd/buildguard/")
		fmt.Println(out)
		if err != nil {
			return err
		}
		for _, m := range benchLine.FindAllStringSubmatch(out, -1) {
			results[m[1]] = m[2]
		}
	}
	get := func(name, unit string) (float64, error) {
		v, ok := benchMetric(results[name], unit)
		if !ok {
			return 0, mg.Fatalf(1, "benchmark %s reported no %s", name, unit)
		}
		return v, nil
	}
	var m [3]float64
	for i, unit := range []string{"direct-ms", "wrapped-ms", "overhead-ms"} {
		v, err := get("Overhead", unit)
		if err != nil {
			return err
		}
		m[i] = v
	}
	fmt.Printf("overhead: buildguard -- true %.2f ms vs true %.2f ms (medians): +%.2f ms median overhead (target < 5 ms)\n", m[1], m[0], m[2])
	for _, c := range []struct{ name, target string }{
		{"pipe", "≥ 0.9×"},
		{"transcript", "none"},
		{"pty", "≥ 0.5×"},
	} {
		for i, unit := range []string{"direct-MB/s", "wrapped-MB/s", "ratio"} {
			v, err := get("Passthrough/"+c.name, unit)
			if err != nil {
				return err
			}
			m[i] = v
		}
		fmt.Printf("passthrough %s: wrapped %.0f MB/s vs direct %.0f MB/s: %.2f× (target %s)\n", c.name, m[1], m[0], m[2], c.target)
	}
	return nil
}
