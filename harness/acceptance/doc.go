// Package acceptance is the proof of docs/build-safety.md#3 for buildguard: for
// each build tool (Gradle, Maven) it generates the two-module project at a
// path with spaces, builds it, starts a live JVM with an agent attached, and
// runs the seven scenarios (opt-out, partial-failure, competing-owner,
// same-owner-recovery, exact-byte-receipts, up-to-date-barrier,
// offline-before-output) in order against real compilers, the real
// buildguard binary and the Gradle init script / Maven shim.
//
// It owns the fixture, the preflight of the machine's tools, the live
// application, the scenario checks and the evidence. It does not own the
// wrapper, the integrations or the agent; it runs them as a user would.
// Everything it writes stays under one fresh work directory; evidence.json is
// written into a lane's project root only when all seven scenarios passed.
//
// The full run is `go tool mage acceptance` (both lanes; LANE=gradle or
// LANE=maven, or `go tool mage acceptanceLane maven`, selects one; WORK_DIR
// picks the fresh work dir; BUILDGUARD_AGENT_JAR attaches another agent
// instead of harness/refagent). It is not part of `go test`. Product code
// never imports this package.
package acceptance
