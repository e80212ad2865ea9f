// Package buildguard is the core of the build wrapper: it takes an owned hold
// on the Reclazz agent, runs one build as a supervised child, and releases the
// held class output only after the child exited 0 (docs/decisions.md#D8,
// docs/decisions.md#D9, docs/decisions.md#D12, docs/mcp-server.md#6 and
// docs/agent-protocol.md#10.4).
//
// It owns:
//   - owner tokens (NewOwner, OwnerLine): a build's identity at the agent, the
//     only thing a user needs to recover a failed or abandoned build;
//   - the hold session (Guard.Run): one connection for the whole run,
//     `BUILD started` acknowledged before the child starts, `BUILD ok` or
//     `BUILD failed` acknowledged after it exits, and the error that says
//     which promise could not be kept (ErrRefused, ErrCannotRun, ErrUnsafe,
//     *InterruptedError);
//   - child supervision behind a Runner: ExecRunner (own process group,
//     inherited or copied stdio) and PTYRunner (own session on a
//     pseudo-terminal, raw stdin, window size), both ending every process of
//     the child's group on every path;
//   - signals: SIGINT, SIGTERM, SIGHUP and SIGQUIT are forwarded to the child's
//     process group, which is killed after a grace period (a SIGHUP ignored
//     at start, as under nohup, stays ignored for the wrapper and the child);
//   - the wrapper's log lines on a terminal (LogWriter), aligned also while
//     a PTYRunner keeps the terminal in raw mode.
//
// It does not own the wire (package agentproto does), the command line or
// exit codes (package internal/cli maps this package's errors to them), and
// it never prints to stdout: stdout belongs to the child.
package buildguard
