//go:build unix

// Package clients is buildguard's MCP client acceptance matrix: real MCP
// clients that we did not write drive a live JVM through `buildguard mcp`
// (docs/build-safety.md#4, issue 7).
//
// It owns the pieces every lane shares: the consumer project (Service.java
// with a call counter, App.java that answers one PROBE line per stdin line,
// compiled with javac into the watched classes directory), the JVM launch
// with the reference agent attached (killed on every path), the ten
// scored workflow scenarios (the seven of docs/build-safety.md#4, the two
// one-call ones and concurrent-safe-builds) and the pause/resume extension written once against the
// abstract [Client] interface, the oracle that decides whether a completion
// is real, and the evaluation.json / evidence.json writers. The Go SDK lane
// (github.com/modelcontextprotocol/go-sdk over CommandTransport, once per
// protocol version) implements [Client]; the TypeScript SDK lane is an
// independent node --test program in ts/ that this package only installs,
// starts and reads back ([RunTSLane]).
//
// It is a test harness: product code never imports it. The mage target
// `go tool mage clients` runs every lane and regenerates docs/client-matrix.md.
package clients
