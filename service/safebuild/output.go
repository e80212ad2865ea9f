package safebuild

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/buildguard/buildguard/service/diagnostics"
)

// Bounds of the output a result carries (docs/safe-build.md#7).
const (
	// TailLines is the most lines output.tail holds.
	TailLines = 100
	// TailBytes is the most bytes output.tail holds.
	TailBytes = 16 << 10
	// MessageChars is the most characters of a progress message.
	MessageChars = 200
)

// capture is where the build's stdout and stderr go: every byte to the log
// file, the last TailBytes to a ring for the tail, and each completed line
// counted and offered to the progress limiter. It is safe for the two
// streams' copies to write concurrently.
type capture struct {
	mu      sync.Mutex
	log     *bufio.Writer // nil: no log
	logErr  error
	logMax  int64  // the most bytes of output the log keeps
	logged  int64  // bytes of output written to the log
	cut     bool   // output was dropped at logMax
	ring    []byte // the last len(ring) bytes written, oldest first once full
	start   int    // where the next byte goes: the oldest once full
	full    bool
	total   int64
	lines   int                 // completed lines
	partial bool                // bytes after the last newline
	current []byte              // the line being written, at most lineKeep bytes
	last    []byte              // the last completed line, at most lineKeep bytes
	onLine  func()              // called (without the lock) after a write completed a line
	parser  *diagnostics.Parser // nil: the output is not parsed
	feed    *diagnostics.Feed   // passes the output to parser off the pipe's path
	// unparsed counts the bytes of output the parser did not read.
	unparsed int64
}

// parseWait bounds how long the result waits for the parser to read the
// output queued for it when the build ends (docs/safe-build.md#12).
const parseWait = 5 * time.Second

// lineKeep bounds what is kept of the line being written: enough for
// MessageChars characters of up to 4 bytes each, and a carriage return.
const lineKeep = MessageChars*utf8.UTFMax + 1

// newCapture writes every byte to log up to logMax bytes (0 means
// DefaultMaxLogMiB); past that the log is cut, and the output is still
// counted and kept for the tail.
func newCapture(log io.Writer, logMax int64, onLine func()) *capture {
	if logMax <= 0 {
		logMax = DefaultMaxLogMiB << 20
	}
	c := &capture{ring: make([]byte, TailBytes), logMax: logMax, onLine: onLine}
	if log != nil {
		c.log = bufio.NewWriterSize(log, 64<<10)
	}
	return c
}

// Write implements io.Writer. It never fails: a failing log is dropped and
// reported by flush, so the build is never blocked or ended by its log.
func (c *capture) Write(p []byte) (int, error) {
	c.mu.Lock()
	if c.log != nil && c.logErr == nil && !c.cut {
		part := p
		if room := c.logMax - c.logged; int64(len(part)) > room {
			part, c.cut = part[:room], true
		}
		n, err := c.log.Write(part)
		c.logged += int64(n)
		if err != nil {
			c.logErr = err
		}
	}
	c.appendRing(p)
	if c.parser != nil && c.feed == nil {
		c.feed = diagnostics.NewFeed(c.parser, 0)
	}
	feed := c.feed
	c.total += int64(len(p))
	completed := c.countLines(p)
	onLine := c.onLine
	c.mu.Unlock()
	if feed != nil {
		// Outside the lock: the Feed may wait for the parser (within its
		// share), and progress is read meanwhile. The build's two streams
		// share one pipe (buildguard.Command), so one goroutine writes.
		feed.Write(p)
	}
	if completed && onLine != nil {
		onLine()
	}
	return len(p), nil
}

// countLines counts the lines p completes and keeps the start of the last
// of them and of the line being written, in three searches of p for
// newlines: a build's output costs no work per line beyond finding its
// end. The last line becomes a progress message only when one is asked
// for (progress).
func (c *capture) countLines(p []byte) (completed bool) {
	end := bytes.LastIndexByte(p, '\n')
	if end < 0 {
		c.current = keep(c.current, p)
		c.partial = true
		return false
	}
	c.lines += 1 + bytes.Count(p[:end], []byte{'\n'})
	if start := bytes.LastIndexByte(p[:end], '\n'); start >= 0 {
		c.last = keep(c.last[:0], p[start+1:end])
	} else {
		c.last = keep(append(c.last[:0], c.current...), p[:end])
	}
	c.current = keep(c.current[:0], p[end+1:])
	c.partial = end+1 < len(p)
	return true
}

// keep appends to line what fits of b within lineKeep bytes.
func keep(line, b []byte) []byte {
	if room := lineKeep - len(line); room > 0 {
		line = append(line, b[:min(room, len(b))]...)
	}
	return line
}

// appendRing keeps the last len(ring) bytes: start is where the next byte
// goes, which is the oldest byte once the ring is full.
func (c *capture) appendRing(p []byte) {
	n := len(c.ring)
	if len(p) >= n {
		copy(c.ring, p[len(p)-n:])
		c.start, c.full = 0, true
		return
	}
	for len(p) > 0 {
		k := copy(c.ring[c.start:], p)
		c.start += k
		if c.start == n {
			c.start, c.full = 0, true
		}
		p = p[k:]
	}
}

// diagnostics returns what the parser found in the output so far, waiting
// up to parseWait for it to read what is queued.
func (c *capture) diagnostics() diagnostics.Summary {
	c.mu.Lock()
	feed, parser := c.feed, c.parser
	c.mu.Unlock()
	switch {
	case parser == nil:
		return diagnostics.Summary{}
	case feed == nil: // nothing was written
		return parser.Summary()
	}
	s, unparsed := feed.Summary(parseWait)
	c.mu.Lock()
	c.unparsed = unparsed
	c.mu.Unlock()
	return s
}

// progress returns the completed lines so far and the latest of them.
func (c *capture) progress() (int, string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.lines, message(c.last)
}

// flush writes out the buffered log, ending a cut log with a line that
// says so, and returns its first error.
func (c *capture) flush() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.log != nil && c.logErr == nil && c.cut {
		_, c.logErr = fmt.Fprintf(c.log, "\n[buildguard: the log was cut at %s; the build printed %d bytes in all, see output.tail for its end]\n", mib(c.logMax), c.total)
	}
	if c.log != nil && c.logErr == nil {
		c.logErr = c.log.Flush()
	}
	return c.logErr
}

// summary is the output part of a result, without the log file.
func (c *capture) summary() (tail string, lines int, truncated bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	lines = c.lines
	if c.partial {
		lines++
	}
	var raw []byte
	if c.full {
		raw = append(append(raw, c.ring[c.start:]...), c.ring[:c.start]...)
	} else {
		raw = append(raw, c.ring[:c.start]...)
	}
	cut := c.total > int64(len(raw))
	if cut {
		// The first line is only the end of a longer one: drop it when a
		// whole line follows.
		if i := bytes.IndexByte(raw, '\n'); i >= 0 && i+1 < len(raw) {
			raw = raw[i+1:]
		}
	}
	tail, more := boundTail(raw)
	return tail, lines, cut || more
}

// boundTail makes raw valid UTF-8 (invalid bytes read as U+FFFD) and keeps at
// most the last TailLines lines and TailBytes bytes. more reports whether
// anything was dropped.
func boundTail(raw []byte) (string, bool) {
	s := strings.ToValidUTF8(string(raw), "\uFFFD")
	more := false
	body := strings.TrimSuffix(s, "\n")
	if n := strings.Count(body, "\n") + 1; body != "" && n > TailLines {
		idx := len(body)
		for range TailLines {
			idx = strings.LastIndexByte(body[:idx], '\n')
		}
		s = s[idx+1:]
		more = true
	}
	if len(s) > TailBytes {
		s = s[len(s)-TailBytes:]
		for len(s) > 0 && !utf8.RuneStart(s[0]) {
			s = s[1:]
		}
		more = true
	}
	return s, more
}

// message is a progress message from one line: without a trailing carriage
// return, valid UTF-8, at most MessageChars characters.
func message(line []byte) string {
	s := strings.ToValidUTF8(string(bytes.TrimRight(line, "\r")), "\uFFFD")
	if utf8.RuneCountInString(s) <= MessageChars {
		return s
	}
	n := 0
	for i := range s {
		if n == MessageChars {
			return s[:i]
		}
		n++
	}
	return s
}
