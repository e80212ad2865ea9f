// Package agenttest is an in-process fake of the Reclazz agent's status socket
// for tests, in the style of net/http/httptest: [NewServer] listens on
// 127.0.0.1:0 (or [::1]), writes a port file the way the agent does, and
// closes in t.Cleanup.
//
// The fake implements docs/agent-protocol.md#13.1 in full: the docs/agent-protocol.md#1.4 inbound line
// reader (512 UTF-16 units, '\r' dropped anywhere, EOF partial line processed),
// the per-connection 1000-line outbox with the back-pressure WARN, the
// 5-client limit, heartbeats, the docs/agent-protocol.md#2.3 escaping and truncation, the docs/agent-protocol.md#4
// dispatcher and grammars, the docs/agent-protocol.md#5 BUILD hold state machine (owners, legacy
// holds, generations, asynchronous acceptance with an injectable outcome), the
// docs/agent-protocol.md#6 pause control, DOCTOR evidence (docs/agent-protocol.md#7), the VERIFY receipt ledger (docs/agent-protocol.md#8) and the
// docs/agent-protocol.md#9 wiring windows. Every fault of docs/agent-protocol.md#13.2 can be injected through [Faults] and
// the [ReplyFunc] hook, and every command line each connection sent is recorded
// so tests can prove what the agent did and did not receive.
//
// It owns the server side of the wire only. The client lives in package
// agentproto; this package imports it for the shared token, class-name and
// hash validators so both sides agree on the grammar.
//
// For scripts that need the agent as a separate process (testscript, a
// re-executed test binary), [Main] runs the fake from command-line flags until
// it is interrupted; see its documentation for the flag set.
package agenttest
