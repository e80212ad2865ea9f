package fakeagent

import (
	"fmt"
	"strings"
	"time"

	"github.com/buildguard/buildguard/agentproto"
)

const (
	// maxMessageChars is the longest message text sent unchanged (docs/agent-protocol.md#2.3).
	maxMessageChars = 4096
	// truncatedMarker is appended to a message cut at maxMessageChars.
	truncatedMarker = "...(truncated)"
	// connectedMessage is the message of the CONNECTED line (docs/agent-protocol.md#3.1).
	connectedMessage = "Agent status server connected"
)

// Event is one agent status line before encoding: a level and its free text.
type Event struct {
	Level   string
	Message string
}

// Truncate applies the agent's docs/agent-protocol.md#2.3 length rule to a message: longer than 4096
// UTF-16 units keeps the first 4096 units and appends "...(truncated)". A
// surrogate pair cut in half leaves a lone surrogate, which the agent's UTF-8
// encoder writes as '?'. Invalid UTF-8 decodes to U+FFFD.
func Truncate(s string) string {
	if agentproto.UTF16Len(s) <= maxMessageChars {
		return s
	}
	prefix, splitPair := agentproto.CutUTF16(s, maxMessageChars)
	var b strings.Builder
	for _, r := range prefix {
		b.WriteRune(r) // invalid UTF-8 becomes U+FFFD, byte by byte, as Java decodes it
	}
	if splitPair {
		b.WriteByte('?')
	}
	b.WriteString(truncatedMarker)
	return b.String()
}

// Escape applies the agent's docs/agent-protocol.md#2.3 JSON string escaping (without truncation):
// backslash, quote, LF, CR and TAB get their short escapes, every other char
// below U+0020 becomes \u00xx with lower-case hex, and everything else (DEL,
// U+2028, non-ASCII, '/') is written raw.
func Escape(s string) string {
	var b strings.Builder
	b.Grow(len(s) + 8)
	for _, r := range s {
		switch {
		case r == '\\':
			b.WriteString(`\\`)
		case r == '"':
			b.WriteString(`\"`)
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\r':
			b.WriteString(`\r`)
		case r == '\t':
			b.WriteString(`\t`)
		case r < 0x20:
			fmt.Fprintf(&b, `\u%04x`, r)
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}

// Timestamp formats t like Java's Instant.toString in UTC: the fraction is
// omitted when zero, else written with 3, 6 or 9 digits.
func Timestamp(t time.Time) string {
	t = t.UTC()
	base := t.Format("2006-01-02T15:04:05")
	ns := t.Nanosecond()
	switch {
	case ns == 0:
		return base + "Z"
	case ns%1_000_000 == 0:
		return fmt.Sprintf("%s.%03dZ", base, ns/1_000_000)
	case ns%1_000 == 0:
		return fmt.Sprintf("%s.%06dZ", base, ns/1_000)
	default:
		return fmt.Sprintf("%s.%09dZ", base, ns)
	}
}

// now is the agent clock: microsecond resolution, like a JVM on Linux.
func now() time.Time { return time.Now().UTC().Truncate(time.Microsecond) }

// EncodeLine renders one agent line without its line terminator, exactly as
// the agent's string templates do (docs/agent-protocol.md#2.1): fixed field order, no whitespace,
// the message truncated and escaped, and `"type":"structural"` appended for
// STRUCTURAL_RELOAD.
func EncodeLine(level, message string, ts time.Time) string {
	line := `{"level":"` + Escape(level) + `","message":"` + Escape(Truncate(message)) + `","timestamp":"` + Timestamp(ts) + `"`
	if level == agentproto.LevelStructuralReload {
		line += `,"type":"structural"`
	}
	return line + "}"
}

// ConnectedLine renders the CONNECTED handshake line for an agent release.
func ConnectedLine(agent string, ts time.Time) string {
	return `{"level":"CONNECTED","message":"` + connectedMessage + `","timestamp":"` + Timestamp(ts) +
		`","version":1,"agent":"` + Escape(Truncate(agent)) + `"}`
}
