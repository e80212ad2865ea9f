package agentproto

import (
	"fmt"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Java's string rules, in one place: the agent and the contract it follows
// are Java, so lengths count UTF-16 units (String.length), blankness is
// String.isBlank, control characters are Character.isISOControl, trimming
// is String.trim, and numbers, a port among them, parse as
// Integer.parseInt. Everything of buildguard that measures or checks text
// the way the agent does uses these.

// UTF16Len returns the length of s in UTF-16 code units, which is how the
// agent (a Java program) counts characters: String.length(). Invalid UTF-8
// bytes count as one unit each, as they decode to U+FFFD.
func UTF16Len(s string) int {
	n := 0
	for _, r := range s {
		n += UTF16RuneLen(r)
	}
	return n
}

// UTF16LenBytes is UTF16Len of b, without copying it into a string.
func UTF16LenBytes(b []byte) int {
	n := 0
	for len(b) > 0 {
		r, size := utf8.DecodeRune(b)
		n += UTF16RuneLen(r)
		b = b[size:]
	}
	return n
}

// CutUTF16 returns the longest prefix of s of whole runes that is at most n
// UTF-16 units long, as Java's s.substring(0, n) would cut it, and whether
// that cut falls inside a surrogate pair (Java would then keep a lone high
// surrogate, which its UTF-8 encoder writes as '?').
func CutUTF16(s string, n int) (prefix string, splitPair bool) {
	units := 0
	for i, r := range s {
		w := UTF16RuneLen(r)
		if units+w > n {
			return s[:i], units < n
		}
		units += w
	}
	return s, false
}

// UTF16RuneLen is how many Java chars (UTF-16 units) rune r takes: two
// outside the Basic Multilingual Plane, else one.
func UTF16RuneLen(r rune) int {
	if r >= 0x10000 && r <= utf8.MaxRune {
		return 2
	}
	return 1
}

// HasControl reports whether s contains an ISO control character (C0, DEL or
// C1), which Java's Character.isISOControl rejects.
func HasControl(s string) bool {
	for _, r := range s {
		if unicode.IsControl(r) {
			return true
		}
	}
	return false
}

// IsBlank is Java's String.isBlank: s is empty or holds only Java white
// space (Character.isWhitespace) — the Unicode space, line and paragraph
// separators except the no-break ones (U+00A0, U+2007, U+202F), and TAB, LF,
// VT, FF, CR and U+001C..U+001F. Unlike Go's unicode.IsSpace it does not
// count a no-break space or U+0085 as blank.
func IsBlank(s string) bool {
	for _, r := range s {
		switch {
		case r >= '\t' && r <= '\r', r >= 0x1C && r <= 0x1F:
		case r == 0xA0 || r == 0x2007 || r == 0x202F:
			return false
		case unicode.In(r, unicode.Zs, unicode.Zl, unicode.Zp):
		default:
			return false
		}
	}
	return true
}

// JavaTrim is Java's String.trim(): it strips every char up to U+0020 (space
// and the C0 controls) from both ends, and nothing else — a no-break space
// stays.
func JavaTrim(s string) string {
	return strings.TrimFunc(s, func(r rune) bool { return r <= ' ' })
}

// ParseJavaInt parses s like Java's Integer.parseInt: an optional sign and
// decimal digits, no spaces, within the int32 range. A digit is any decimal
// digit of the Basic Multilingual Plane, as Character.digit takes it, so
// "٥٠٠٠" (Arabic-Indic) is 5000; a digit outside the BMP is two surrogate
// chars to Java and no digit.
func ParseJavaInt(s string) (int, bool) {
	var ascii strings.Builder
	for i, r := range s {
		if i == 0 && (r == '+' || r == '-') {
			ascii.WriteRune(r)
			continue
		}
		d := javaDigit(r)
		if d < 0 {
			return 0, false
		}
		ascii.WriteByte(byte('0' + d))
	}
	digits := strings.TrimLeft(ascii.String(), "+-")
	if digits == "" || len(ascii.String())-len(digits) > 1 {
		return 0, false
	}
	n, err := strconv.ParseInt(ascii.String(), 10, 32)
	if err != nil {
		return 0, false
	}
	return int(n), true
}

// javaDigit is Character.digit(ch, 10) for a rune: its value when it is a
// decimal digit (Nd) of the BMP, else -1. Unicode keeps every run of Nd
// digits contiguous and ordered 0 to 9, so the value is the distance from
// the start of the run, modulo 10.
func javaDigit(r rune) int {
	if r >= '0' && r <= '9' {
		return int(r - '0')
	}
	if UTF16RuneLen(r) == 2 || !unicode.Is(unicode.Nd, r) {
		return -1
	}
	zero := r
	for unicode.Is(unicode.Nd, zero-1) {
		zero--
	}
	return int(r-zero) % 10
}

// ParsePort parses a port as the contract does, with Java's rules:
// trimmed like Java's trim(), Java Integer.parseInt syntax, then 1..65535.
// An unparsable value is reported as given ("invalid port: <raw>"); an
// out-of-range one by its number, which is also returned.
func ParsePort(raw string) (int, error) {
	n, ok := ParseJavaInt(JavaTrim(raw))
	if !ok {
		return 0, fmt.Errorf("%w: %s", ErrInvalidPort, raw)
	}
	if n < 1 || n > 65535 {
		return n, fmt.Errorf("%w: %d", ErrInvalidPort, n)
	}
	return n, nil
}
