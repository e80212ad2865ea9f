//go:build mage

package main

import "github.com/magefile/mage/sh"

// Conformance runs the agent conformance suite verbosely: the fake agent, the
// reference JVM agent, and a real Reclazz agent jar when BUILDGUARD_AGENT_JAR
// names one (BUILDGUARD_AGENT_ARGS adds agent arguments; {dirs} stands for the
// watched class directories). Without the jar that entry point is reported as
// skipped ("not run"), never as passed.
func Conformance() error {
	return sh.RunV("go", "test", "-count=1", "-v", "-run", "^(TestFakeAgent|TestReferenceAgent|TestRealAgent)$", "./harness/conformance/")
}
