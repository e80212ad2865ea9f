package safebuild

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"path/filepath"
	"unicode/utf8"
)

// MaxLogRead is the most bytes one ReadLog returns, counted as the text's
// JSON encoding (a NUL byte counts six, as \u0000): a build log read back
// through MCP resources/read comes in parts of at most this size, each
// saying where the next one starts (docs/safe-build.md#12).
const MaxLogRead = 1 << 20

// ErrNotALog means a path given to ReadLog is not a build log buildguard
// wrote: not named as one, not beneath a project's .buildguard/logs/,
// reached through a link, a file with a second hard link, not a regular
// file, or another user's (docs/decisions.md#D23).
var ErrNotALog = errors.New("not a build log")

// ErrLogOffset means an offset given to ReadLog lies outside the log.
var ErrLogOffset = errors.New("offset outside the build log")

// LogPart is the part of a build log one ReadLog returns.
type LogPart struct {
	// Text is the log from Offset to Next as valid UTF-8 (each byte that is
	// not, U+FFFD); its JSON encoding has at most MaxLogRead bytes.
	Text string
	// Offset is where Text starts in the log, in bytes.
	Offset int64
	// Next is the offset of the first byte Text does not hold; Size when
	// Text reaches the end of the log.
	Next int64
	// Size is the log's size when it was read.
	Size int64
}

// ReadLog reads the build log at path from offset on, at most MaxLogRead
// bytes of encoded text. path must be absolute and clean, named as a build
// log (docs/safe-build.md#9), in the logs directory of a project's state
// directory. The file is opened beneath the project without following a
// link at any step (openLogBeneath); .buildguard, logs and the file must be
// of this user, the file a regular file with no other hard link.
func ReadLog(path string, offset int64) (LogPart, error) {
	if !filepath.IsAbs(path) || filepath.Clean(path) != path {
		return LogPart{}, fmt.Errorf("%w: %s is not a clean absolute path", ErrNotALog, path)
	}
	logs := filepath.Dir(path)
	state := filepath.Dir(logs)
	if !logName().MatchString(filepath.Base(path)) || filepath.Base(logs) != "logs" || filepath.Base(state) != StateDir {
		return LogPart{}, fmt.Errorf("%w: %s is not <project>/%s/logs/<build log>", ErrNotALog, path, StateDir)
	}
	f, err := openLogBeneath(filepath.Dir(state), filepath.Base(path))
	if err != nil {
		return LogPart{}, fmt.Errorf("%w: %w", ErrNotALog, err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err == nil {
		err = checkOwn(path, fi, false)
	}
	if err == nil && linkCount(f, fi) != 1 {
		err = fmt.Errorf("%s has another hard link: a build log has one name only", path)
	}
	if err != nil {
		return LogPart{}, fmt.Errorf("%w: %w", ErrNotALog, err)
	}
	size := fi.Size()
	if offset < 0 || offset > size {
		return LogPart{}, fmt.Errorf("%w: %d is not within the %d bytes of %s", ErrLogOffset, offset, size, path)
	}
	buf := make([]byte, min(size-offset, MaxLogRead))
	n, err := f.ReadAt(buf, offset)
	if err != nil && !errors.Is(err, io.EOF) {
		return LogPart{}, fmt.Errorf("reading %s: %w", path, &fs.PathError{Op: "read", Path: path, Err: err})
	}
	text, used := logText(buf[:n], offset+int64(n) >= size)
	return LogPart{Text: text, Offset: offset, Next: offset + int64(used), Size: size}, nil
}

// logText turns the start of b into valid UTF-8 text whose JSON encoding
// has at most MaxLogRead bytes, and says how many bytes of b it holds. An
// invalid byte becomes U+FFFD; a character cut by the end of b is left for
// the next read unless b reaches the end of the log.
func logText(b []byte, atEnd bool) (string, int) {
	out := make([]byte, 0, len(b))
	cost, i := 0, 0
	for i < len(b) {
		if !atEnd && !utf8.FullRune(b[i:]) {
			break
		}
		r, n := utf8.DecodeRune(b[i:])
		c := jsonCost(r, n)
		if cost+c > MaxLogRead {
			break
		}
		cost += c
		if r == utf8.RuneError && n == 1 {
			out = utf8.AppendRune(out, utf8.RuneError)
		} else {
			out = append(out, b[i:i+n]...)
		}
		i += n
	}
	return string(out), i
}

// jsonCost is how many bytes encoding/json writes for the rune r of n
// bytes in a string, or more: HTML characters and the other control
// characters are escaped as \u00XX.
func jsonCost(r rune, n int) int {
	switch {
	case r == utf8.RuneError && n == 1:
		return 3 // written as U+FFFD
	case r == '"' || r == '\\' || r == '\n' || r == '\r' || r == '\t':
		return 2
	case r < 0x20 || r == '<' || r == '>' || r == '&' || r == '\u2028' || r == '\u2029':
		return 6
	}
	return n
}
