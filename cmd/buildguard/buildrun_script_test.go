//go:build unix

package main

import (
	"testing"

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
	}))
}
