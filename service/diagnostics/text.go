package diagnostics

import (
	"strings"
	"unicode/utf8"
)

// clean makes s a message: valid UTF-8, whitespace collapsed, control
// characters shown as '?', at most MaxMessageBytes.
func clean(s string) string {
	if tidy(s) {
		return cut(s, MaxMessageBytes)
	}
	s = strings.ToValidUTF8(s, "\uFFFD")
	s = strings.Join(strings.Fields(s), " ")
	return cut(strings.Map(visibleRune, s), MaxMessageBytes)
}

// name makes s a file, module or task name: valid UTF-8, control
// characters shown as '?', at most n bytes; a longer one keeps its start
// and its end around "…".
func name(s string, n int) string {
	if !tidy(s) {
		s = strings.Map(visibleRune, strings.ToValidUTF8(s, "\uFFFD"))
	}
	if len(s) <= n {
		return s
	}
	const dots = "…"
	head := cut(s, n/4)
	tail := s[len(s)-(n-len(head)-len(dots)):]
	for len(tail) > 0 && !utf8.RuneStart(tail[0]) {
		tail = tail[1:]
	}
	return head + dots + tail
}

// Visible is s as a terminal or a model may be shown it: terminal escape
// sequences removed, control characters (C0, DEL, C1) and line or
// paragraph separators shown as '?', invalid UTF-8 as U+FFFD.
func Visible(s string) string {
	if tidy(s) || s == "" {
		return s
	}
	if strings.IndexByte(s, 0x1b) >= 0 || strings.Contains(s, string(c1CSI)) {
		s = string(stripANSI([]byte(s)))
	}
	return strings.Map(visibleRune, strings.ToValidUTF8(s, "\uFFFD"))
}

// visibleRune shows a control character (C0, DEL, C1) and a line or
// paragraph separator as '?': none of them reaches a terminal or a
// model's text.
func visibleRune(r rune) rune {
	if r < 0x20 || r == 0x7f || (r >= 0x80 && r < 0xa0) || r == 0x2028 || r == 0x2029 {
		return '?'
	}
	return r
}

// tidy reports whether s is already a message: ASCII without control
// characters, leading, trailing or doubled blanks.
func tidy(s string) bool {
	if s == "" || s[0] == ' ' || s[len(s)-1] == ' ' {
		return s == ""
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c < ' ' || c >= 0x7f || (c == ' ' && s[i+1] == ' ') {
			return false
		}
	}
	return true
}

// appendMessage joins more to msg with sep, within MaxMessageBytes.
func appendMessage(msg, sep, more string) string {
	more = clean(more)
	if more == "" {
		return msg
	}
	if msg == "" {
		return more
	}
	return cut(msg+sep+more, MaxMessageBytes)
}

// cut shortens the valid UTF-8 string s to at most n bytes on a character
// boundary.
func cut(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}

// c1CSI is U+009B, the one-character CSI, in UTF-8.
var c1CSI = []byte{0xc2, 0x9b}

// stripANSI removes terminal escape sequences: CSI (colours, cursor
// moves: ESC [ or U+009B, … final byte), the strings of OSC, DCS, SOS, PM and APC
// (ESC ] … up to BEL or ESC \) and two-byte escapes. What a cut sequence
// leaves is dropped with it.
func stripANSI(b []byte) []byte {
	out := make([]byte, 0, len(b))
	for i := 0; i < len(b); i++ {
		if b[i] == 0xc2 && i+1 < len(b) && b[i+1] == 0x9b {
			i += 2
			for i < len(b) && (b[i] < 0x40 || b[i] > 0x7e) {
				i++
			}
			continue
		}
		if b[i] != 0x1b {
			out = append(out, b[i])
			continue
		}
		if i+1 >= len(b) {
			break
		}
		switch b[i+1] {
		case '[':
			i += 2
			for i < len(b) && (b[i] < 0x40 || b[i] > 0x7e) {
				i++
			}
		case ']', 'P', 'X', '^', '_':
			i += 2
			for i < len(b) && b[i] != 0x07 && !(b[i] == 0x1b && i+1 < len(b) && b[i+1] == '\\') {
				i++
			}
			if i < len(b) && b[i] == 0x1b {
				i++
			}
		default:
			i++ // a two-byte escape
		}
	}
	return out
}
