package boundedfile

import (
	"fmt"
	"io"
	"strings"
)

// ReadToken returns the token file holds, trimmed of surrounding
// whitespace: one token of minChars to maxChars printable ASCII characters
// without spaces, in a file only its owner may read or write, and whose
// owner runs this process (or is root). A refusal is an *Refusal.
func ReadToken(file string, minChars, maxChars int) (string, error) {
	f, _, err := Open(file, int64(maxChars)+2)
	if err != nil {
		return "", &Refusal{Unreadable, fmt.Sprintf("cannot read %s: %v", file, err)}
	}
	defer f.Close()
	if err := privateToOwner(f, file); err != nil {
		return "", &Refusal{NotPrivate, err.Error()}
	}
	b, err := io.ReadAll(io.LimitReader(f, int64(maxChars)+2))
	if err != nil {
		return "", &Refusal{Unreadable, fmt.Sprintf("cannot read %s: %v", file, err)}
	}
	tok := strings.TrimSpace(string(b))
	if len(tok) < minChars || len(tok) > maxChars || strings.IndexFunc(tok, func(r rune) bool { return r <= ' ' || r > '~' }) >= 0 {
		return "", &Refusal{Malformed, file}
	}
	return tok, nil
}
