//go:build unix

// Package hostlanes runs the MCP hosts' own command lines — Claude Code,
// Codex, Gemini CLI, pinned versions installed from npm — end to end
// against buildguard and a scripted model on loopback, and records what
// each host's model received back from reclazz_safe_build
// (docs/host-matrix.md#1).
//
// A lane is one host and one scenario ([Scenarios]: a failing build with
// real javac errors, a passing build with changed classes, a build longer
// than the host's tool timeout that answers running and is resumed, a build
// queued behind another). It
// installs the host's npm package into a cache folder (never globally),
// makes a private HOME, writes a project whose builds are real javac runs,
// starts the fake agent (harness/fakeagent) for it, runs `buildguard init
// --host NAME` as a user would, starts the scripted model (package model)
// and runs the host's one-shot command in the project. The model asks for
// the safe build; the host calls `buildguard mcp`; the host's next request
// to the model carries what the host made of the tool's result. The lane
// keeps every request, checks what the model must see (the result, and how
// the host presented buildguard's instructions and the tool), and writes
// record.json beside them.
//
// Every child runs in its own process group and is killed with the group
// on every path; every wait has a bound.
//
// It is a test harness: product code never imports it. `go tool mage
// hosts` runs the lanes and regenerates docs/host-matrix.md.
package hostlanes
