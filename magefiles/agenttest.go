//go:build mage

package main

import "github.com/magefile/mage/sh"

// AgentTest runs the fake agent's own tests (package agentproto/agenttest,
// including its testscript transcripts) under the race detector.
func AgentTest() error {
	return sh.RunV("go", "test", "-race", "-count=1", "./agentproto/agenttest/...")
}
