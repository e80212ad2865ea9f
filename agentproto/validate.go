package agentproto

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Limits of the status-socket protocol (docs/agent-protocol.md#11).
const (
	// MaxCommandChars is the longest command line the agent accepts, in UTF-16
	// code units, excluding the newline. A longer line makes the agent close the
	// connection without a reply.
	MaxCommandChars = 512
	// MaxReplyChars is the longest agent line a client reads, in UTF-16 code
	// units, excluding the line terminator. A line of this length or longer fails
	// the request with ErrTooLong.
	MaxReplyChars = 16384
	// MaxBroadcastLineBytes is the longest agent line a broadcast query
	// (HEALTH, PENDING, DIAGNOSE) reads, in bytes, excluding the terminator.
	// The Java sidecar's broadcast reader has no cap and a valid agent line
	// can exceed MaxReplyChars (a 4096-char message of control characters is
	// ~25K chars escaped), so these lines get the 64 KiB bound
	// docs/agent-protocol.md#2.4 recommends; a longer line fails with ErrTooLong.
	MaxBroadcastLineBytes = 64 << 10
	// MaxClassNameChars is the longest binary class name VERIFY and DIAGNOSE accept.
	MaxClassNameChars = 256
	// MaxTokenChars is the longest request, owner, DOCTOR or VERIFY token.
	MaxTokenChars = 64
)

// ValidToken reports whether s matches ^[A-Za-z0-9_-]{1,64}$, the alphabet of
// request, owner, DOCTOR and VERIFY tokens.
func ValidToken(s string) bool {
	if len(s) == 0 || len(s) > MaxTokenChars {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9', c == '_', c == '-':
		default:
			return false
		}
	}
	return true
}

// ValidSHA256 reports whether s is exactly 64 lower-case hexadecimal digits.
func ValidSHA256(s string) bool {
	if len(s) != 64 {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f') {
			return false
		}
	}
	return true
}

// ValidClassName reports whether s is a Java binary class name as the agent
// accepts it: at most 256 UTF-16 units, dot-separated Java identifiers
// (`$` and `_` allowed, Unicode letters allowed), no identifier-ignorable
// code points. Examples: "A", "com.acme.OrderService$Line", "app.Örnek".
func ValidClassName(s string) bool {
	if s == "" || UTF16Len(s) > MaxClassNameChars || !utf8.ValidString(s) {
		return false
	}
	for _, seg := range strings.Split(s, ".") {
		if seg == "" {
			return false
		}
		for i, r := range seg {
			if identifierIgnorable(r) {
				return false
			}
			if i == 0 && !javaIdentifierStart(r) || i > 0 && !javaIdentifierPart(r) {
				return false
			}
		}
	}
	return true
}

// javaIdentifierStart mirrors Character.isJavaIdentifierStart: letters,
// letter numbers, currency symbols and connector punctuation.
func javaIdentifierStart(r rune) bool {
	return unicode.IsLetter(r) || unicode.Is(unicode.Nl, r) || unicode.Is(unicode.Sc, r) || unicode.Is(unicode.Pc, r)
}

// javaIdentifierPart mirrors Character.isJavaIdentifierPart without the
// identifier-ignorable characters, which a class name never contains.
func javaIdentifierPart(r rune) bool {
	return javaIdentifierStart(r) || unicode.Is(unicode.Nd, r) || unicode.Is(unicode.Mn, r) || unicode.Is(unicode.Mc, r)
}

// identifierIgnorable mirrors Character.isIdentifierIgnorable: the ISO
// controls that are not whitespace, and the format characters (Cf).
func identifierIgnorable(r rune) bool {
	return r <= 0x08 || r >= 0x0E && r <= 0x1B || r >= 0x7F && r <= 0x9F || unicode.Is(unicode.Cf, r)
}

// CheckCommand returns ErrInvalidCommand unless line is safe to send as one
// command: at most MaxCommandChars UTF-16 units and no control character (so
// no argument can smuggle in a second line).
func CheckCommand(line string) error {
	if UTF16Len(line) > MaxCommandChars || HasControl(line) || !utf8.ValidString(line) {
		return ErrInvalidCommand
	}
	return nil
}

// NewToken returns a fresh random UUID (version 4) in its canonical 36-character
// lower-case form. It is used as the request token of every correlated
// command and as the default build owner.
func NewToken() string {
	var b [16]byte
	if _, err := rand.Read(b[:]); err != nil {
		// crypto/rand never fails on supported platforms (Go 1.24+ panics instead).
		panic(fmt.Sprintf("agentproto: reading random bytes: %v", err))
	}
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	var out [36]byte
	hex.Encode(out[0:8], b[0:4])
	out[8] = '-'
	hex.Encode(out[9:13], b[4:6])
	out[13] = '-'
	hex.Encode(out[14:18], b[6:8])
	out[18] = '-'
	hex.Encode(out[19:23], b[8:10])
	out[23] = '-'
	hex.Encode(out[24:36], b[10:16])
	return string(out[:])
}
