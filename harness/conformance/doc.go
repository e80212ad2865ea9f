// Package conformance is the one protocol suite every Reclazz-compatible agent
// must pass: the in-process fake (harness/fakeagent), the reference Java
// agent (harness/refagent) attached to a small JVM, and a real Reclazz agent
// jar when a user supplies one (BUILDGUARD_AGENT_JAR).
//
// [Run] drives the cases of docs/agent-protocol.md against an [Agent] made by a
// [Launcher]: the handshake and port file; every command's grammar, including
// the silently ignored malformed forms, docs/agent-protocol.md#2.3 escaping and Java's UTF-8
// decoding; the docs/agent-protocol.md#5 owner table; failed-build holds and same-owner recovery;
// VERIFY receipts; DOCTOR field rules; pause/resume counts; the 5-client
// limit; the 512-char command limit; heartbeats. Agents attached to a live JVM
// ([App]) also run the live-reload proof: a changed class shows up in the
// application's output with no hold, stays out under a held or failed build
// until the same owner's `BUILD ok`, and its receipt names the exact bytes on
// disk.
//
// The cases talk to the agent over the raw socket; grammar cases send literal
// lines and prove silence with a fence: the agent answers the commands of one
// connection in order, so a correlated DOCTOR reply shows that every earlier
// line was read and produced nothing.
//
// The package is test infrastructure. Tests import it; product code never
// does. It owns the suite and the JVM fixture ([StartJVM]); it does not own
// the agents it checks.
package conformance
