// Package diagnostics finds the errors and warnings in a JVM build's output
// while it streams (docs/safe-build.md#12, decision docs/decisions.md#D19):
// javac, kotlinc, Maven and Gradle lines, the test-compile variants, and the
// tasks and modules that failed.
//
// A Parser is fed the build's output in any chunks (it is an io.Writer) and
// keeps bounded state whatever it is fed: a line is cut at MaxLineBytes, at
// most MaxDiagnostics errors and as many warnings are kept, messages are cut
// at MaxMessageBytes, and duplicates beyond the kept ones are recognised
// through a bounded set of hashes. A 100 MB output is parsed in flat memory.
// Summary returns the result: errors before warnings, each in the order they
// first appeared, duplicates merged, at most MaxDiagnostics with the count
// of the rest, and the failed tasks and modules.
//
// A Feed passes the output to a Parser on a goroutine of its own through a
// bounded queue, so that the build's pipes are never held up by parsing;
// each line also has a budget (the located formats are read in one pass,
// trying a bounded number of separators).
//
// Parsing never fails: a line that matches no known format is skipped (it
// stays in the build's log, which this package does not keep). The package
// does not run builds, keep logs or decide outcomes; it imports nothing of
// this module.
package diagnostics
