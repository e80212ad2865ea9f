// Package integrations holds buildguard's build-tool integrations and their tests.
//
// The integrations themselves are not Go code:
//
//   - gradle/buildguard.init.gradle, a Gradle init script that adds the task
//     reclazzSafeBuild to the root project. It runs one complete child Gradle build
//     under buildguard and refuses mixed task graphs, continuous mode, nesting and
//     bad -Pbuildguard.* properties before anything runs.
//   - gradle/buildguard-cycles.init.gradle, the init script that `buildguard
//     --continuous` applies to a continuous Gradle build so that each cycle reports
//     its start (and waits for the hold) and its result (embedded by package
//     integrations/gradle; docs/decisions.md#D20).
//   - bin/buildguard-gradle and bin/buildguard-mvn, POSIX sh shims (with .cmd twins
//     for Windows) that find ./gradlew or ./mvnw (else the tool on PATH), refuse
//     long-running goals, Maven's --continuous and nesting, and exec buildguard with
//     the build as its child (a continuous Gradle build with --continuous).
//
// This package owns their tests: the init scripts against the real Gradle 4.4.1 (the
// cycles script with the real buildguard and the fake agent) and the shims against
// fake tools and one real Maven 3.8.7 build, each with a fake buildguard executable
// that records exactly what the integration launches. It does
// not own the wrapper itself (package buildguard and cmd/buildguard) or the
// acceptance proof against a live JVM (harness).
package integrations
