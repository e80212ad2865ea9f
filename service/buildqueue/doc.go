// Package buildqueue admits guarded builds one at a time per project, in
// the order they arrived, across every process of the user
// (docs/decisions.md#D18, docs/safe-build.md#4): the safe builds of any
// number of `buildguard mcp` servers, `buildguard build run`, and the
// terminal wrapper with the Gradle and Maven integrations that go through
// it.
//
// The queue of a project lives in ROOT/.buildguard/queue/ of the project's
// root (Root: one rule for every front, whatever directory of the project
// a build starts in), never followed through a symlink. Each waiting or running build owns one ticket file
// there, numbered in arrival order (the numbers go round after the
// largest a name can carry; an entry named like a ticket that is not one
// is skipped, left alone, and uses up no number), and holds an OS lock on it
// (internal/filelock) for as long as it waits or runs; the kernel drops
// that lock when its holder dies, so a ticket whose lock can be taken is
// abandoned and is removed by whoever finds it. A short lock on the queue's
// lock file orders every change. A waiting build sleeps on the lock of the
// ticket ahead of it and wakes the moment that ticket is released, finished
// or killed; a check every second (less often in a line longer than 16,
// up to every 10 s) is the safety net and the clock of its reports. The
// check costs one stat of the queue's directory while the line is quiet:
// every ticket that enters, leaves or changes state moves the directory's
// time of change, and only then, or once a minute, are the tickets read;
// a line found quiet is checked half as often each time, up to every 10 s
// (docs/performance.md#5.7). The tickets order the builds; the
// run lock excludes them: the build whose turn it is also locks the
// project's root directory until it has ended, so a hand that removes a
// ticket, the queue or .buildguard under a running build never lets a
// second one start beside it (a waiting build whose ticket went away takes
// a new one). A queue's lock is taken again when its file was replaced
// while it was awaited, and a wait for it ends with an error after
// lockPatience.
//
// A turn lasts as long as the build's processes (docs/decisions.md#D22):
// once its command runs, a build records the command's process group and
// session (Turn.Started) in the queue's directory, and removes the record
// at its Release. A build whose supervisor died leaves its record behind;
// the next build that takes the run lock waits for the processes it names,
// up to its grace period, and ends what is left of them before it starts
// (outlive.go). A build started from inside a running one is admitted by
// the turn's secret, which only the build's environment holds (TurnEnv).
//
// The same mechanism,
// with more than one build admitted at once, keeps the per-user slots of
// BUILDGUARD_MAX_BUILDS.
//
// A safe build that arrives while an identical one (same project, same key:
// the caller puts in it everything that makes two builds the same,
// docs/decisions.md#D22) is still waiting joins it instead of queueing a build of its own: its
// ticket says whom it joined, and when that build ends it leaves its result
// in the queue for the joined builds to read. Joining works across
// processes. A build that has started is never joined, and a joined build
// whose leader went away without a result (cancelled while waiting, killed)
// falls back to its own place in the line.
//
// The package owns the queue's files, its order, liveness, coalescing and
// the words of a waiting build's status. It does not run builds, speak to
// the agent or know the fronts: callers say when their build has ended.
package buildqueue
