// Package cycle is the wrapper's side of a continuous Gradle build's cycle
// channel (docs/decisions.md#D20): the Gradle command it accepts, the init
// script it applies to it, and the private loopback socket over which that
// script reports each cycle's start and result and waits for the answer.
//
// It owns:
//   - the rule for the command (Check): a Gradle command (gradle, gradlew,
//     gradle.bat, gradlew.bat) in continuous mode (-t or --continuous, in
//     every spelling Gradle's parser accepts), without
//     --configuration-cache, whose cached runs would skip the init script;
//     and its converse for the guard of one build (Finite);
//   - the channel (Open): a private directory (mode 0700) holding the init
//     script and a channel file (mode 0600) with the socket's port and a
//     per-run secret, a listener on 127.0.0.1, and Argv, which applies both
//     to the command (--init-script, -Pbuildguard.cycleChannel) and turns
//     the configuration cache off;
//   - the wire (below).
//
// The wire is one connection per cycle, opened by the init script before any
// task of the cycle runs; lines end with "\n" and are at most MaxLine bytes:
//
//	script:  buildguard-cycle 1 SECRET start
//	wrapper: ack N                | refused REASON
//	script:  finish ok            | finish failed
//	wrapper: released N           | held N
//
// A connection whose first line is not a start with the run's secret is
// closed unanswered. A start while another cycle runs (the script applied
// twice to one build) is refused when that cycle does not end within the
// hello timeout. A cycle whose connection ends before its finish line
// failed.
//
// It does not own the agent, the hold or what a cycle's end means for it
// (package buildguard does), nor any wording a user sees.
package cycle
