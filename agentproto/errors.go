package agentproto

import "errors"

//lint:file-ignore ST1005 the error texts are the contract's reason strings, capitals and full stops included.

// The errors below are the failure reasons a client reports. Their texts are
// the reason strings of the contract (docs/mcp-server.md#1.2, docs/mcp-server.md#3), so results that
// carry them read the same as the Java sidecar's; wrapping errors add context
// with %w and callers test them with errors.Is. None of them is ever success.
// They name no setting of any front: where a reason string of the contract
// goes on to say which setting to change (ErrNoPortFile,
// ErrProjectNotConfirmed), each front adds that in its own words after the
// error's text, which ends with the sentinel's (docs/decisions.md#D2).
var (
	// ErrNoPortFile means no port file was found where the endpoint says to look.
	// Start the application with the agent attached, or give its port or its
	// port file. Resolve returns it as it is, never wrapped.
	ErrNoPortFile = errors.New("no port file found")
	// ErrUnreadablePortFile means a port file exists but does not hold a number.
	ErrUnreadablePortFile = errors.New("unreadable port file")
	// ErrInvalidPort means a port value is not an integer in 1..65535.
	ErrInvalidPort = errors.New("invalid port")
	// ErrUnreachable means no agent accepted a connection on the port (neither
	// on 127.0.0.1 nor on [::1]); the application is not running or the port
	// file is stale.
	ErrUnreachable = errors.New("cannot reach the agent")
	// ErrNoHandshake means the connection ended or timed out before the agent's
	// CONNECTED line arrived.
	ErrNoHandshake = errors.New("No agent handshake received before disconnect or timeout")
	// ErrInvalidHandshake means the first line was not a protocol-1 CONNECTED
	// event; the peer is not a Reclazz agent, or speaks another protocol version.
	// No command is sent after it.
	ErrInvalidHandshake = errors.New("Invalid agent handshake")
	// ErrInvalidCommand means a command was refused before sending: longer than
	// 512 characters or containing a control character.
	ErrInvalidCommand = errors.New("invalid agent command")
	// ErrInvalidResponse means the agent sent a line that is not a JSON object,
	// a blank INFO message, or a correlated reply that fails validation.
	ErrInvalidResponse = errors.New("Invalid agent response")
	// ErrTooLong means an agent line reached MaxReplyChars.
	ErrTooLong = errors.New("Agent response exceeds size limit")
	// ErrDisconnected means the agent closed the connection before the awaited reply.
	ErrDisconnected = errors.New("Agent disconnected")
	// ErrTimeout means the deadline passed before the awaited correlated reply.
	// The command may still have taken effect; query before retrying.
	ErrTimeout = errors.New("Agent acknowledgement timed out")
	// ErrNoInfo means a broadcast query (HEALTH, PENDING, DIAGNOSE) collected no
	// INFO line before the connection ended or the deadline passed.
	ErrNoInfo = errors.New("No INFO response received before disconnect or timeout")
	// ErrIO means the connection failed while a command was being sent or its
	// answer read.
	ErrIO = errors.New("Agent connection failed while sending or reading the command")
	// ErrRejected means the agent answered BUILD_REJECTED: another owner holds
	// the output, or this owner has no hold to finish.
	ErrRejected = errors.New("Build ownership rejected; another hold is active or this owner has not started")
	// ErrNoOwner means the agent answered a BUILD without the owner= suffix:
	// it is older than build ownership and never sends the acknowledgement
	// an owned build awaits. It comes with ErrInvalidResponse.
	ErrNoOwner = errors.New("the agent answered BUILD without owner=, so it predates build ownership")
	// ErrProjectNotConfirmed means the explicit-project DOCTOR gate failed; the
	// requested command was not sent. Compare DOCTOR's workingDirectory with
	// the selected project directory.
	ErrProjectNotConfirmed = errors.New("Selected project could not be confirmed; no requested command sent.")
)
