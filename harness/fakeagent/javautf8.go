package fakeagent

import (
	"bufio"
	"unicode/utf8"
)

// readJavaRune reads the next code point the way the agent's
// InputStreamReader decodes UTF-8 (JDK sun.nio.cs.UTF_8 with REPLACE): a
// malformed sequence becomes one U+FFFD per malformed unit as Java delimits
// it — a cut multi-byte sequence ("\xe2\x82") or an encoded surrogate
// ("\xed\xa0\x80") is a single U+FFFD, an invalid lead byte or a stray
// continuation byte one each. It peeks only as far as Java's decoder needs to
// decide, so it blocks no longer than the agent would.
func readJavaRune(br *bufio.Reader) (rune, error) {
	b, err := br.Peek(1)
	if err != nil {
		return 0, err
	}
	b1 := b[0]
	var n int
	switch {
	case b1 < 0x80:
		br.Discard(1)
		return rune(b1), nil
	case b1 >= 0xc2 && b1 <= 0xdf:
		n = 2
	case b1 >= 0xe0 && b1 <= 0xef:
		n = 3
	case b1 >= 0xf0 && b1 <= 0xf4:
		n = 4
	default: // C0, C1, F5..FF and stray continuation bytes
		return bad(br, 1)
	}
	// peek returns up to k bytes; fewer only at the end of the input.
	peek := func(k int) []byte {
		p, _ := br.Peek(k)
		return p
	}
	p := peek(2)
	if len(p) < 2 {
		return bad(br, len(p)) // input ends inside the sequence
	}
	b2 := p[1]
	switch n {
	case 2:
		if !continuation(b2) {
			return bad(br, 1)
		}
	case 3:
		if b1 == 0xe0 && b2&0xe0 == 0x80 || !continuation(b2) {
			return bad(br, 1)
		}
	case 4:
		if b1 == 0xf0 && (b2 < 0x90 || b2 > 0xbf) || b1 == 0xf4 && b2&0xf0 != 0x80 || !continuation(b2) {
			return bad(br, 1)
		}
	}
	if n > 2 {
		if p = peek(3); len(p) < 3 {
			return bad(br, len(p))
		}
		if !continuation(p[2]) {
			return bad(br, 2)
		}
	}
	if n > 3 {
		if p = peek(4); len(p) < 4 {
			return bad(br, len(p))
		}
		if !continuation(p[3]) {
			return bad(br, 3)
		}
	}
	r, size := utf8.DecodeRune(p[:n])
	if r == utf8.RuneError && size <= 1 {
		// Only an encoded surrogate (ED A0..BF xx) is left: Java replaces
		// the whole three-byte sequence.
		return bad(br, n)
	}
	br.Discard(n)
	return r, nil
}

func continuation(b byte) bool { return b&0xc0 == 0x80 }

// bad consumes a malformed sequence of n bytes and yields one U+FFFD.
func bad(br *bufio.Reader, n int) (rune, error) {
	br.Discard(n)
	return utf8.RuneError, nil
}
