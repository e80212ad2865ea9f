package fakeagent

import (
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/buildguard/buildguard/agentproto"
)

// Kind names a command kind of the dispatcher (docs/agent-protocol.md#4.1).
type Kind string

// Command kinds.
const (
	KindBuild    Kind = "BUILD"
	KindReload   Kind = "RELOAD"
	KindDoctor   Kind = "DOCTOR"
	KindVerify   Kind = "VERIFY"
	KindPending  Kind = "PENDING"
	KindScan     Kind = "SCAN"
	KindHealth   Kind = "HEALTH"
	KindDiagnose Kind = "DIAGNOSE"
)

// Handshake selects what the agent sends instead of a correct CONNECTED line
// (docs/agent-protocol.md#13.2 "Handshake"). The zero value is the correct handshake.
type Handshake int

// Handshake faults.
const (
	HandshakeOK             Handshake = iota // the correct CONNECTED line
	HandshakeSilent                          // send nothing, keep the connection open
	HandshakeClose                           // close right after accept, no line
	HandshakeMalformed                       // a line that is not JSON
	HandshakeArray                           // a JSON array
	HandshakeScalar                          // a JSON string
	HandshakeTruncated                       // half the CONNECTED line, no newline, then close
	HandshakeWrongLevel                      // level "INFO"
	HandshakeAgentMissing                    // no "agent" field
	HandshakeAgentBlank                      // "agent":"  "
	HandshakeAgentNumber                     // "agent":1.1
	HandshakeVersionMissing                  // no "version" field
	HandshakeVersionString                   // "version":"1"
	HandshakeVersionFloat                    // "version":1.0
	HandshakeVersion0                        // "version":0
	HandshakeVersion2                        // "version":2
	HandshakeExtraFields                     // extra unknown fields (valid)
	HandshakeBOM                             // a UTF-8 BOM before the line
	HandshakeEventFirst                      // an INFO event before CONNECTED
	HandshakeHeartbeatFirst                  // a HEARTBEAT before CONNECTED
	HandshakeTwice                           // CONNECTED sent twice
	handshakeEnd
)

var handshakeNames = [...]string{"ok", "silent", "close", "malformed", "array", "scalar", "truncated",
	"wrong-level", "agent-missing", "agent-blank", "agent-number", "version-missing", "version-string",
	"version-float", "version-0", "version-2", "extra-fields", "bom", "event-first", "heartbeat-first", "twice"}

// String returns the flag spelling of h (see [ParseHandshake]).
func (h Handshake) String() string {
	if h >= 0 && h < handshakeEnd {
		return handshakeNames[h]
	}
	return "unknown"
}

// ParseHandshake maps a flag spelling ("ok", "silent", "close", "malformed",
// "array", "scalar", "truncated", "wrong-level", "agent-missing",
// "agent-blank", "agent-number", "version-missing", "version-string",
// "version-float", "version-0", "version-2", "extra-fields", "bom",
// "event-first", "heartbeat-first", "twice") to its Handshake.
func ParseHandshake(s string) (Handshake, bool) {
	for i, n := range handshakeNames {
		if n == s {
			return Handshake(i), true
		}
	}
	return 0, false
}

// handshakeLines returns the raw lines (without terminator) for h and whether
// the connection is closed after them; partial is a final fragment written
// without a terminator.
func handshakeLines(h Handshake, agent string, ts time.Time) (lines []string, partial string, closeAfter bool) {
	good := ConnectedLine(agent, ts)
	t := Timestamp(ts)
	head := `{"level":"CONNECTED","message":"` + connectedMessage + `","timestamp":"` + t + `"`
	a := Escape(Truncate(agent))
	switch h {
	case HandshakeSilent:
		return nil, "", false
	case HandshakeClose:
		return nil, "", true
	case HandshakeMalformed:
		return []string{`{"level":CONNECTED,"message":"Agent status server connected","version":1,"agent":"` + a + `"`}, "", false
	case HandshakeArray:
		return []string{`["CONNECTED",1,"` + a + `"]`}, "", false
	case HandshakeScalar:
		return []string{`"CONNECTED"`}, "", false
	case HandshakeTruncated:
		return nil, good[:len(good)/2], true
	case HandshakeWrongLevel:
		return []string{strings.Replace(good, `"level":"CONNECTED"`, `"level":"INFO"`, 1)}, "", false
	case HandshakeAgentMissing:
		return []string{head + `,"version":1}`}, "", false
	case HandshakeAgentBlank:
		return []string{head + `,"version":1,"agent":"  "}`}, "", false
	case HandshakeAgentNumber:
		return []string{head + `,"version":1,"agent":1.1}`}, "", false
	case HandshakeVersionMissing:
		return []string{head + `,"agent":"` + a + `"}`}, "", false
	case HandshakeVersionString:
		return []string{head + `,"version":"1","agent":"` + a + `"}`}, "", false
	case HandshakeVersionFloat:
		return []string{head + `,"version":1.0,"agent":"` + a + `"}`}, "", false
	case HandshakeVersion0:
		return []string{head + `,"version":0,"agent":"` + a + `"}`}, "", false
	case HandshakeVersion2:
		return []string{head + `,"version":2,"agent":"` + a + `"}`}, "", false
	case HandshakeExtraFields:
		return []string{head + `,"version":1,"agent":"` + a + `","build":"2026-09-01","features":["verify","doctor"],"limits":{"clients":5}}`}, "", false
	case HandshakeBOM:
		return []string{"\uFEFF" + good}, "", false
	case HandshakeEventFirst:
		return []string{EncodeLine(agentproto.LevelInfo, "Reloaded com.acme.Early (3ms)", ts), good}, "", false
	case HandshakeHeartbeatFirst:
		return []string{EncodeLine(agentproto.LevelHeartbeat, "", ts), good}, "", false
	case HandshakeTwice:
		return []string{good, good}, "", false
	}
	return []string{good}, "", false
}

// Faults injects agent misbehaviour (docs/agent-protocol.md#13.2). The zero value
// is a correct agent. Knobs compose: a handshake fault, a reply hook and the
// transport knobs apply independently.
type Faults struct {
	// Handshake replaces the CONNECTED line of every new connection.
	Handshake Handshake
	// HandshakeDelay delays the handshake of every new connection.
	HandshakeDelay time.Duration
	// DisconnectAfterHandshake closes each connection right after CONNECTED;
	// the agent handles no command from it.
	DisconnectAfterHandshake bool
	// DisconnectOn, when it returns true for a received command line (as read),
	// closes that connection before the command is handled (no state change,
	// no reply).
	DisconnectOn func(line string) bool
	// RST makes every fault-driven close an abortive close (SO_LINGER 0, so the
	// peer sees a connection reset instead of EOF).
	RST bool
	// StopReading makes the agent never read commands: the client's writes
	// pile up in the TCP window.
	StopReading bool
	// RejectBuild, when it returns true, rejects a syntactically valid BUILD
	// before the hold state machine sees it (no state change).
	RejectBuild func(state, owner string) bool
	// Fail makes a handler "throw": when it returns an error for a command,
	// the agent broadcasts WARN "Could not answer <command>: <error>" and
	// sends no reply (for BUILD, before any state change).
	Fail func(kind Kind, command string) error
	// Reply rewrites or disturbs replies before they are sent. It is called for
	// each correlated reply and for each line of a broadcast query answer.
	Reply ReplyFunc
}

// Reply is one reply line the agent is about to send; a [ReplyFunc] may change
// any of the writable fields.
type Reply struct {
	// Kind, Command (stripped), Conn (the requesting connection id), Token (the
	// request token, "" for queries) and State (BUILD state or RELOAD action,
	// lower-case) describe the request. Read-only.
	Kind    Kind
	Command string
	Conn    int
	Token   string
	State   string

	// Level is the reply's level; "INFO" by default.
	Level string
	// Message is the unescaped message text, e.g. "BUILD_ACK t started owner=o"
	// or "DOCTOR_RESULT t {...}".
	Message string
	// Drop sends nothing (the state change, if any, still happened).
	Drop bool
	// Delay sends the reply after this long, without blocking the connection.
	Delay time.Duration
	// Broadcast sends the reply to every client instead of only the requester;
	// false for a query line sends it only to the requester.
	Broadcast bool
	// Copies sends the reply this many extra times (duplicates).
	Copies int
	// Before and After are extra lines sent around the reply (noise).
	Before, After []Event
	// Raw, when non-nil, replaces the encoded reply line(s): each entry is
	// written verbatim with the line terminator, no escaping or truncation
	// (for oversized or malformed lines).
	Raw []string
	// Coalesce writes Before, the reply and After in one TCP write.
	Coalesce bool
	// Trickle writes the reply in small separate writes.
	Trickle bool
	// Partial writes the first half of the reply without a terminator, then
	// closes the connection (disconnect mid-line).
	Partial bool
	// Endless writes the reply's start and then never ends the line, trickling
	// bytes until the connection closes.
	Endless bool
	// Close closes the connection after the reply.
	Close bool
}

// ReplyFunc rewrites a reply in place.
type ReplyFunc func(r *Reply)

// Chain runs the non-nil hooks in order.
func Chain(fs ...ReplyFunc) ReplyFunc {
	var live []ReplyFunc
	for _, f := range fs {
		if f != nil {
			live = append(live, f)
		}
	}
	switch len(live) {
	case 0:
		return nil
	case 1:
		return live[0]
	}
	return func(r *Reply) {
		for _, f := range live {
			f(r)
		}
	}
}

// ForKind applies f only to replies of the given kinds.
func ForKind(f ReplyFunc, kinds ...Kind) ReplyFunc {
	return func(r *Reply) {
		for _, k := range kinds {
			if r.Kind == k {
				f(r)
				return
			}
		}
	}
}

// ForBuild applies f only to BUILD replies whose state is one of states
// ("started", "ok", "failed"); no states means every BUILD reply.
func ForBuild(f ReplyFunc, states ...string) ReplyFunc {
	return func(r *Reply) {
		if r.Kind != KindBuild {
			return
		}
		if len(states) == 0 {
			f(r)
			return
		}
		for _, s := range states {
			if r.State == s {
				f(r)
				return
			}
		}
	}
}

// DropReply never sends the reply (the command still took effect).
func DropReply(r *Reply) { r.Drop = true }

// DelayReply sends the reply after d.
func DelayReply(d time.Duration) ReplyFunc { return func(r *Reply) { r.Delay = d } }

// WrongToken replaces the request token in the reply with another one.
func WrongToken(r *Reply) {
	if r.Token != "" {
		r.Message = strings.Replace(r.Message, " "+r.Token+" ", " wrong-"+r.Token+" ", 1)
	}
}

// WrongTokenFirst sends a copy of the reply with another token before it.
func WrongTokenFirst(r *Reply) {
	if r.Token == "" {
		return
	}
	wrong := strings.Replace(r.Message, " "+r.Token+" ", " wrong-"+r.Token+" ", 1)
	r.Before = append(r.Before, Event{Level: r.Level, Message: wrong})
}

// OmitOwner removes the " owner=<owner>" suffix of a BUILD reply
// (a pre-ownership agent's ACK).
func OmitOwner(r *Reply) {
	if i := strings.Index(r.Message, " owner="); r.Kind == KindBuild && i >= 0 {
		r.Message = r.Message[:i]
	}
}

// RejectedInsteadOfAck turns a BUILD_ACK into BUILD_REJECTED (the state change
// already happened; use Faults.RejectBuild for a rejection without one).
func RejectedInsteadOfAck(r *Reply) {
	r.Message = strings.Replace(r.Message, "BUILD_ACK ", "BUILD_REJECTED ", 1)
}

// BroadcastReply sends the reply to every client.
func BroadcastReply(r *Reply) { r.Broadcast = true }

// ReplyLevel sends the reply with another level.
func ReplyLevel(level string) ReplyFunc { return func(r *Reply) { r.Level = level } }

// BlankReply empties the reply message.
func BlankReply(r *Reply) { r.Message = "" }

// Duplicate sends the reply n extra times.
func Duplicate(n int) ReplyFunc { return func(r *Reply) { r.Copies = n } }

// TrickleReply splits the reply across many small writes.
func TrickleReply(r *Reply) { r.Trickle = true }

// Noise sends events before the reply and coalesces nothing.
func Noise(events ...Event) ReplyFunc {
	return func(r *Reply) { r.Before = append(r.Before, events...) }
}

// CoalesceWith sends events after the reply in the same TCP write.
func CoalesceWith(events ...Event) ReplyFunc {
	return func(r *Reply) { r.After = append(r.After, events...); r.Coalesce = true }
}

// CloseAfterReply closes the connection after the reply.
func CloseAfterReply(r *Reply) { r.Close = true }

// PartialReply writes half the reply line, then closes (mid-line disconnect).
func PartialReply(r *Reply) { r.Partial = true }

// EndlessReply starts the reply line and never ends it (slowloris).
func EndlessReply(r *Reply) { r.Endless = true }

// OversizeReply replaces the reply with one INFO line of about n bytes whose
// message starts with the real message (bypassing the 4096-char truncation).
func OversizeReply(n int) ReplyFunc {
	return func(r *Reply) {
		pad := n - len(r.Message) - 80
		if pad < 0 {
			pad = 0
		}
		r.Raw = []string{`{"level":"` + r.Level + `","message":"` + Escape(r.Message) + " " + strings.Repeat("x", pad) +
			`","timestamp":"` + Timestamp(now()) + `"}`}
	}
}

// EditPayload rewrites the JSON payload of DOCTOR_RESULT / VERIFY_RESULT
// replies (the text after "<KIND> <token> "); f gets and returns raw JSON.
func EditPayload(f func(payload string) string) ReplyFunc {
	return func(r *Reply) {
		if r.Kind != KindDoctor && r.Kind != KindVerify {
			return
		}
		prefix := r.Kind.resultPrefix() + " " + r.Token + " "
		if strings.HasPrefix(r.Message, prefix) {
			r.Message = prefix + f(strings.TrimPrefix(r.Message, prefix))
		}
	}
}

// SetField rewrites one member of the DOCTOR/VERIFY payload object to the raw
// JSON value, which must be one valid JSON value (added at the end when
// absent; the other members keep their order).
func SetField(key, rawJSON string) ReplyFunc {
	return editObject(func(o agentproto.Object) agentproto.Object {
		return o.Set(key, json.RawMessage(rawJSON))
	})
}

// DeleteField removes one member of the DOCTOR/VERIFY payload object.
func DeleteField(key string) ReplyFunc {
	return editObject(func(o agentproto.Object) agentproto.Object {
		out := agentproto.Object{}
		for _, m := range o {
			if m.Key != key {
				out = append(out, m)
			}
		}
		return out
	})
}

// editObject rewrites the DOCTOR/VERIFY payload as an ordered object; a
// payload that is no object is left as it is.
func editObject(f func(agentproto.Object) agentproto.Object) ReplyFunc {
	return EditPayload(func(p string) string {
		o, err := agentproto.ParseObject([]byte(p))
		if err != nil {
			return p
		}
		b, err := f(o.Clone()).MarshalJSON()
		if err != nil {
			panic(fmt.Sprintf("fakeagent: editing the payload: %v", err)) // a test passed invalid JSON
		}
		return string(b)
	})
}

// resultPrefix is the reply keyword of a correlated kind.
func (k Kind) resultPrefix() string {
	switch k {
	case KindBuild:
		return "BUILD_ACK"
	case KindReload:
		return "RELOAD_STATE"
	case KindDoctor:
		return "DOCTOR_RESULT"
	case KindVerify:
		return "VERIFY_RESULT"
	}
	return string(k)
}

// RequesterOnly sends a broadcast query line (PENDING/HEALTH/DIAGNOSE) only to
// the requesting connection.
func RequesterOnly(r *Reply) { r.Broadcast = false }

// Rewrite replaces the reply message with f(message), e.g. to answer with the
// wrong state, action or owner, or a RELOAD_STATE that contradicts its action.
func Rewrite(f func(message string) string) ReplyFunc {
	return func(r *Reply) { r.Message = f(r.Message) }
}
