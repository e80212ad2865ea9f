//go:build mage

package main

import "github.com/magefile/mage/sh"

// FakeAgent runs the fake agent's own tests (package harness/fakeagent,
// including its testscript transcripts) under the race detector.
func FakeAgent() error {
	return sh.RunV("go", "test", "-race", "-count=1", "./harness/fakeagent/...")
}
