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
		{"^BenchmarkOverhead$", "40x"},
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
	direct, err := get("Overhead/direct", "median-ms")
	if err != nil {
		return err
	}
	wrapped, err := get("Overhead/wrapped", "median-ms")
	if err != nil {
		return err
	}
	fmt.Printf("overhead: buildguard -- true %.2f ms vs true %.2f ms: +%.2f ms median (target < 5 ms)\n", wrapped, direct, wrapped-direct)
	for _, c := range []struct{ name, base, target string }{
		{"pipe-wrapped", "pipe-direct", "≥ 0.9×"},
		{"pipe-transcript", "pipe-direct", "no target"},
		{"pty-wrapped", "pty-direct", "≥ 0.5×"},
	} {
		base, err := get("Passthrough/"+c.base, "MB/s")
		if err != nil {
			return err
		}
		got, err := get("Passthrough/"+c.name, "MB/s")
		if err != nil {
			return err
		}
		fmt.Printf("passthrough %s: %.0f MB/s vs %s %.0f MB/s: %.2f× (target %s)\n", c.name, got, c.base, base, got/base, c.target)
	}
	return nil
}
