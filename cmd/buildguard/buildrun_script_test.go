//go:build unix

package main

import (
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/rogpeppe/go-internal/testscript"
)

// TestBuildRunScripts runs the `buildguard build run` transcripts in
// testdata/buildrun against the fake agent: the result on stdout, progress
// on stderr, the exit codes of docs/decisions.md#D2, what the agent got,
// and signals (docs/safe-build.md#10).
func TestBuildRunScripts(t *testing.T) {
	t.Parallel()
	testscript.Run(t, scriptParams("testdata/buildrun", map[string]func(ts *testscript.TestScript, neg bool, args []string){
		"waitfile": cmdWaitFile,
		"signal":   cmdSignal,
		"gone":     cmdGone,
		"hold":     cmdHold,
		"code":     cmdCode,
		"queued":   cmdQueued,
	}))
}

// queued N: waits (up to 30 s) until the project's build queue in the
// script's directory holds N tickets (docs/decisions.md#D18).
func cmdQueued(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 1 {
		ts.Fatalf("usage: queued N")
	}
	want, err := strconv.Atoi(args[0])
	if err != nil {
		ts.Fatalf("queued: %v", err)
	}
	dir := ts.MkAbs(filepath.Join(".buildguard", "queue"))
	n := 0
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		matches, _ := filepath.Glob(filepath.Join(dir, "t-*"))
		if n = len(matches); n == want {
			return
		}
	}
	ts.Fatalf("the build queue holds %d tickets, want %d", n, want)
}
