//go:build unix && !linux

package main

import "github.com/rogpeppe/go-internal/testscript"

// cmdPtyrun needs Linux's pseudo-terminals and /proc; see ptyrun_test.go.
func cmdPtyrun(ts *testscript.TestScript, neg bool, args []string) {
	ts.Fatalf("ptyrun runs on Linux only; guard the script with [linux]")
}
