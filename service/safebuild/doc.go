// Package safebuild runs one configured build of a project as a single
// guarded step (docs/safe-build.md, decision docs/decisions.md#D16): it picks
// the command from the project's .buildguard.json or detects a Gradle or
// Maven build, runs it on the core's hold session (package buildguard: the
// hold acknowledged before the child starts, the child in its own process
// group with pipes and stdin /dev/null, BUILD ok only after a clean exit),
// streams rate-limited progress from the build's output, keeps a bounded
// tail and a capped log on disk, and after BUILD ok proves the new bytes:
// every class file the build wrote in the agent's watched output
// directories, hashed before BUILD ok, is verified with VERIFY and its
// SHA-256. A result claims no more than was checked (decision
// docs/decisions.md#D21): what the agent was last told and answered
// (told.go), and a proof only from a complete search (search.go,
// prove.go).
//
// Builder.Run takes a build through four stages, one file each, each
// handing its result to the next: admit.go (everything until the
// build's turn in the queue), run.go (the owner and the log in the state
// directory, the hold session, the supervised build), prove.go (the
// changed classes and their proof) and answer.go (the result: its
// outcome, counts and every word of its detail).
//
// It owns the build configuration (LoadProject: exact keys, the schema's
// types), the one-build-at-a-time rule of a server (Builder), the project's
// state directory (StateDir: no symlinks, nobody else's files, only
// its own logs removed), the output capture, the log cap and rotation, the
// progress rate limit, the discovery and verification of changed classes,
// and the result object that the MCP tool reclazz_safe_build and the CLI
// form `buildguard build run` both print.
//
// It does not supervise processes itself (package buildguard does), speak
// the agent's wire (package agentproto does), or know MCP or flags: the
// MCP tool turns Progress calls into notifications/progress, the CLI into
// stderr lines.
package safebuild
