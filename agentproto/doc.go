// Package agentproto is the client side of the Reclazz agent's loopback
// status socket: event and command types, the line codec with the protocol's
// limits, endpoint resolution (port, port file, hybris home, discovery), Dial
// with the strict CONNECTED handshake, the explicit-project DOCTOR gate, and
// correlated requests (BUILD, DOCTOR, VERIFY, RELOAD) next to the broadcast
// queries (HEALTH, PENDING, DIAGNOSE) and SCAN.
//
// It owns the wire and its validation rules; it does not own what a tool or
// the build wrapper makes of a result (package mcp and package buildguard
// do), and it never decides that something succeeded on the agent's behalf:
// every missing, late, uncorrelated or malformed reply is an error.
//
// The server side used in tests lives in harness/fakeagent.
package agentproto
