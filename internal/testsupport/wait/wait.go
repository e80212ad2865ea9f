// Package wait is the one home of the bounded waits of tests and the
// harness: a context with a deadline for one test, a condition polled until
// it holds or a bound passes, the processes of a build until they are gone,
// a pid file until it is written.
//
// Every wait here ends: the condition holds, or the bound passes. None
// sleeps for readiness; each looks again every Every. It is a test-only
// helper: product code never imports it (internal/repocheck/importcheck).
package wait

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/buildguard/buildguard/internal/proc"
)

// Every is the pause between two looks.
const Every = 10 * time.Millisecond

// Context returns a context that ends after d or when the test ends.
func Context(t testing.TB, d time.Duration) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	t.Cleanup(cancel)
	return ctx
}

// Until looks at cond until it holds or d has passed, and returns its last
// answer.
func Until(d time.Duration, cond func() bool) bool {
	deadline := time.Now().Add(d)
	for {
		if cond() {
			return true
		}
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(Every)
	}
}

// For requires cond to hold within d; otherwise the test fails now, saying
// what did not happen.
func For(t testing.TB, d time.Duration, what string, cond func() bool) {
	t.Helper()
	if !Until(d, cond) {
		t.Fatalf("%s: not within %s", what, d)
	}
}

// GoneWithin waits up to d until every pid is gone (proc.Gone) and returns
// those that still run then, nil when all ended. A process killed with
// SIGKILL takes a moment to end.
func GoneWithin(d time.Duration, pids ...int) []int {
	var left []int
	Until(d, func() bool {
		left = left[:0]
		for _, pid := range pids {
			if !proc.Gone(pid) {
				left = append(left, pid)
			}
		}
		return len(left) == 0
	})
	if len(left) == 0 {
		return nil
	}
	return left
}

// Gone requires every pid to end within d; the test fails (and goes on)
// naming those that still run.
func Gone(t testing.TB, d time.Duration, pids ...int) {
	t.Helper()
	if left := GoneWithin(d, pids...); len(left) > 0 {
		t.Errorf("processes %v still run after %s", left, d)
	}
}

// File waits up to d for path to exist and returns its content.
func File(t testing.TB, d time.Duration, path string) []byte {
	t.Helper()
	var b []byte
	For(t, d, path+" appears", func() bool {
		var err error
		b, err = os.ReadFile(path)
		return err == nil
	})
	return b
}

// PIDFileWithin waits up to d for path to exist and returns the pids it
// holds (decimal numbers separated by white space), as a build in a test
// writes them, whole, to say it runs.
func PIDFileWithin(path string, d time.Duration) ([]int, error) {
	var b []byte
	var err error
	if !Until(d, func() bool { b, err = os.ReadFile(path); return err == nil }) {
		return nil, fmt.Errorf("%s did not appear within %s: %w", path, d, err)
	}
	var pids []int
	for _, f := range strings.Fields(string(b)) {
		n, err := strconv.Atoi(f)
		if err != nil {
			return nil, fmt.Errorf("reading pids from %s: %w", path, err)
		}
		pids = append(pids, n)
	}
	return pids, nil
}

// PIDFile is PIDFileWithin for a test, which fails now when the file does
// not appear or holds something else.
func PIDFile(t testing.TB, d time.Duration, path string) []int {
	t.Helper()
	pids, err := PIDFileWithin(path, d)
	if err != nil {
		t.Fatal(err)
	}
	return pids
}
