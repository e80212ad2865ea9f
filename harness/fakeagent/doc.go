// Package fakeagent is an in-process fake of the Reclazz agent's status socket
// for tests, in the style of net/http/httptest: [NewServer] listens on
// 127.0.0.1:0 (or [::1]), writes a port file the way the agent does, and
// closes in t.Cleanup.
//
// The fake implements docs/agent-protocol.md#13.1 in full, each part as the
// section named here of docs/agent-protocol.md says: the inbound line reader
// (#1.4: 512 UTF-16 units, '\r' dropped anywhere, EOF partial line
// processed), the per-connection 1000-line outbox with the back-pressure WARN
// (#1.5), the 5-client limit (#1.6), heartbeats (#3.2), escaping and
// truncation (#2.3), the dispatcher and grammars (#4), the BUILD hold state
// machine (#5: owners, legacy holds, generations, asynchronous acceptance with
// an injectable outcome), the pause control (#6), DOCTOR evidence (#7), the
// VERIFY receipt ledger (#8) and the wiring windows (#9). Every fault of
// docs/agent-protocol.md#13.2 can be injected through [Faults] and the
// [ReplyFunc] hook, and every command line each connection sent is recorded so
// tests can prove what the agent did and did not receive.
//
// It owns the server side of the wire only. The client lives in package
// agentproto; this package imports it for the shared token, class-name and
// hash validators so both sides agree on the grammar.
//
// For scripts that need the agent as a separate process (testscript, a
// re-executed test binary), [Main] runs the fake from command-line flags until
// it is interrupted; see its documentation for the flag set. It is the one
// fake-agent command line, also as a program:
//
//	go run ./harness/fakeagent/cmd/fakeagent -log agent.log
//
// serves on loopback and writes .reclazz/agent.port in the current directory.
package fakeagent
