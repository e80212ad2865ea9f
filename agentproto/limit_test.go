package agentproto

import (
	"errors"
	"strconv"
	"strings"
	"testing"
	"time"
)

// padTo returns the reply event for msg padded with an extra "pad" field so
// that the line is exactly n UTF-16 units long; unit is the pad character
// ("x" counts one unit, "𝒜" two).
func padTo(t *testing.T, msg string, n int, unit string) string {
	t.Helper()
	base := strings.TrimSuffix(info(msg), "}") + `,"pad":""}`
	need := n - UTF16Len(base)
	per := UTF16Len(unit)
	pad := strings.Repeat(unit, need/per) + strings.Repeat("x", need%per)
	line := strings.TrimSuffix(info(msg), "}") + `,"pad":"` + pad + `"}`
	if UTF16Len(line) != n {
		t.Fatalf("padded line is %d units, want %d", UTF16Len(line), n)
	}
	return line
}

// A reply line of 16383 UTF-16 units is read; one of 16384 fails with
// ErrTooLong (docs/mcp-server.md#3.3: "a line of ≥16,384 characters fails").
// Characters outside the BMP count two units, and the line terminator
// (\n or \r\n) does not count.
func TestReplyLineLimit(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, unit, eol string
		units           int
		ok              bool
	}{
		{"ascii 16383", "x", "\n", MaxReplyChars - 1, true},
		{"ascii 16384", "x", "\n", MaxReplyChars, false},
		{"ascii 16383 crlf", "x", "\r\n", MaxReplyChars - 1, true},
		{"non-BMP 16383", "𝒜", "\n", MaxReplyChars - 1, true},
		{"non-BMP 16384", "𝒜", "\n", MaxReplyChars, false},
		{"BMP 3-byte 16383", "€", "\n", MaxReplyChars - 1, true},
		{"BMP 3-byte 16384", "€", "\n", MaxReplyChars, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			port := serve(t, func(p *peer) {
				p.line(connected)
				tok := token(p.command())
				p.write(padTo(t, "RELOAD_STATE "+tok+" status paused=false pendingClasses=0 pendingActions=0 buildHold=none", tc.units, tc.unit) + tc.eol)
				p.command()
			})
			_, err := dial(t, port).Reload(ctxFor(t, 3*time.Second), ReloadStatus)
			if tc.ok && err != nil || !tc.ok && !errors.Is(err, ErrTooLong) {
				t.Fatalf("Reload with a %d-unit line = %v, want ok=%v", tc.units, err, tc.ok)
			}
		})
	}
}

// Broadcast queries read with the Java sidecar's broadcast reader, which has
// no 16384-char cap (docs/agent-protocol.md#2.4): an agent line can legitimately
// reach ~25K chars when a 4096-char message is all control characters
// (escaped six-fold). Go caps those lines at MaxBroadcastLineBytes instead.
func TestQueryLineLimit(t *testing.T) {
	t.Parallel()
	long := `{"level":"INFO","message":"` + strings.Repeat(`\u0001`, 4096) + `...(truncated)","timestamp":"2026-09-08T09:12:44Z"}`
	for _, tc := range []struct {
		name string
		line string
		ok   bool
	}{
		{"escaped 4096-char message", long, true},
		{"exactly the byte cap", padTo(t, "x", MaxBroadcastLineBytes, "x"), true},
		{"one byte over the cap", padTo(t, "x", MaxBroadcastLineBytes+1, "x"), false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			port := serve(t, func(p *peer) {
				p.line(connected)
				p.command()
				p.line(tc.line)
				p.command()
			})
			lines, err := dial(t, port).Query(ctxFor(t, 3*time.Second), "PENDING")
			if tc.ok && (err != nil || len(lines) != 1) || !tc.ok && !errors.Is(err, ErrTooLong) {
				t.Fatalf("Query with a %d-byte line = %d lines, %v; want ok=%v", len(tc.line), len(lines), err, tc.ok)
			}
		})
	}
}

// nested returns n arrays nested in each other: n levels.
func nested(n int) string { return strings.Repeat("[", n) + strings.Repeat("]", n) }

// Agent JSON nests at most MaxDepth levels, the reply object counting one: a
// reply nested one level deeper is an invalid response, like a malformed
// line (docs/decisions.md#D13), and nothing is taken from it.
func TestReplyDepthLimit(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		levels int // of the whole reply object
		ok     bool
	}{{MaxDepth, true}, {MaxDepth + 1, false}} {
		t.Run(strconv.Itoa(tc.levels), func(t *testing.T) {
			t.Parallel()
			port := serve(t, func(p *peer) {
				p.line(connected)
				tok := token(p.command())
				msg := "RELOAD_STATE " + tok + " status paused=true pendingClasses=0 pendingActions=0 buildHold=none"
				p.line(strings.TrimSuffix(info(msg), "}") + `,"deep":` + nested(tc.levels-1) + "}")
				p.command()
			})
			st, err := dial(t, port).Reload(ctxFor(t, 3*time.Second), ReloadStatus)
			switch {
			case tc.ok && (err != nil || !st.Paused):
				t.Fatalf("Reload with a reply %d levels deep = %+v, %v; want the state", tc.levels, st, err)
			case !tc.ok && !errors.Is(err, ErrInvalidResponse):
				t.Fatalf("Reload with a reply %d levels deep = %+v, %v; want ErrInvalidResponse", tc.levels, st, err)
			}
		})
	}
}

func TestParseObjectDepth(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		json string
		ok   bool
	}{
		{`{"a":` + nested(MaxDepth-1) + `}`, true},
		{`{"a":` + nested(MaxDepth) + `}`, false},
		{`{"a":{"b":` + nested(MaxDepth-2) + `}}`, true},
		{`{"a":{"b":` + nested(MaxDepth-1) + `}}`, false},
	} {
		if _, err := ParseObject([]byte(tc.json)); (err == nil) != tc.ok {
			t.Errorf("ParseObject(%.40s…, %d bytes) = %v, want ok=%v", tc.json, len(tc.json), err, tc.ok)
		}
	}
}
