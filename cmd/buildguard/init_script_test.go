//go:build unix

package main

import (
	"testing"

	"github.com/rogpeppe/go-internal/testscript"
)

// TestInitScripts runs the transcripts in testdata/init: init for every host
// against configs a user wrote, and the bounded reading of every input file
// (docs/decisions.md#D13, docs/decisions.md#D15).
func TestInitScripts(t *testing.T) {
	t.Parallel()
	testscript.Run(t, scriptParams("testdata/init", map[string]func(ts *testscript.TestScript, neg bool, args []string){
		"code": cmdCode,
	}))
}
