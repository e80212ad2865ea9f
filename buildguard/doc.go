// Package buildguard is the core of the build wrapper: it takes an owned hold
// on the Reclazz agent, runs one build as a supervised child, and releases the
// held class output only after the child exited 0 and nothing of its process
// group still runs (docs/decisions.md#D8,
// docs/decisions.md#D9, docs/decisions.md#D12, docs/mcp-server.md#6 and
// docs/agent-protocol.md#10.4).
//
// It owns:
//   - owner tokens (NewOwner, CheckOwner): a build's identity at the agent, the
//     only thing a user needs to recover a failed or abandoned build;
//   - every refusal rule of the wrapper's options (Options.Config,
//     ParseTimeoutMs) and of the hold session, as structured errors: a
//     *RefusalError says what was missing or wrong and which Fix (and so
//     which Settings) gets past it, an *OptionError which setting is
//     unusable, an *UnconfirmedError which BUILD went unacknowledged. This
//     package names no flag and no tool argument; each front words the fix
//     for its own users through an Advice (flags on the command line,
//     arguments in MCP);
//   - the hold session (Guard.Run): one connection for the whole run,
//     `BUILD started` acknowledged before the child starts, `BUILD ok` or
//     `BUILD failed` acknowledged after it exits, and the error that says
//     which promise could not be kept (ErrRefused, ErrCannotRun, ErrUnsafe,
//     *StragglersError, *TerminalStopError, *InterruptedError);
//   - child supervision behind a Runner: ExecRunner (own process group,
//     inherited or copied stdio, a terminal on stdin run like a shell job:
//     foreground handed over and taken back, Ctrl-Z and fg, never a wait on
//     a build stopped for the terminal) and PTYRunner (own session on a
//     pseudo-terminal, raw stdin, window size); Runner.Wait reports exit 0
//     as ok only once the child's process group is empty, waiting up to the
//     grace period for it, and both end every process of the group on
//     every path;
//   - signals: SIGINT, SIGTERM, SIGHUP and SIGQUIT are forwarded to the child's
//     process group, which is killed after a grace period (a SIGHUP ignored
//     at start, as under nohup, stays ignored for the wrapper and the child);
//   - the wrapper's log lines on a terminal (LogWriter), aligned also while
//     a PTYRunner keeps the terminal in raw mode.
//
// It does not own the wire (package agentproto does), the command line or
// exit codes (package cli maps this package's errors to them), and
// it never prints to stdout: stdout belongs to the child.
package buildguard
