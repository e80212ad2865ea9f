package jvm

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"
)

// ErrNoLine means no matching line was printed within the wait.
var ErrNoLine = errors.New("not printed in time")

// LineLog collects a process's output lines (an io.Writer for its stdout and
// stderr) and lets a test wait for a line without polling or sleeping. The
// zero value is not ready; use NewLineLog.
type LineLog struct {
	mu      sync.Mutex
	partial []byte
	lines   []string
	changed chan struct{}
}

// NewLineLog returns an empty log.
func NewLineLog() *LineLog { return &LineLog{changed: make(chan struct{})} }

// Write implements io.Writer: complete lines (without "\n" and a trailing
// "\r") are appended; a partial line waits for its end.
func (l *LineLog) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.partial = append(l.partial, p...)
	for {
		i := bytes.IndexByte(l.partial, '\n')
		if i < 0 {
			break
		}
		l.lines = append(l.lines, strings.TrimRight(string(l.partial[:i]), "\r"))
		l.partial = l.partial[i+1:]
	}
	close(l.changed)
	l.changed = make(chan struct{})
	return len(p), nil
}

// Mark returns the index of the next line to be written.
func (l *LineLog) Mark() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.lines)
}

// WaitFor returns the index of the first line at or after from that match
// accepts, waiting at most wait for it (then the error wraps ErrNoLine).
func (l *LineLog) WaitFor(from int, wait time.Duration, match func(string) bool) (int, error) {
	return l.waitFor(context.Background(), from, wait, match, nil)
}

// errAborted is waitFor's error when abort closed first.
var errAborted = errors.New("wait aborted")

// waitFor is WaitFor that also ends when ctx does (with its error) or when
// abort (may be nil) closes (with errAborted). A line already there is
// found first.
func (l *LineLog) waitFor(ctx context.Context, from int, wait time.Duration, match func(string) bool, abort <-chan struct{}) (int, error) {
	deadline := time.NewTimer(wait)
	defer deadline.Stop()
	for {
		l.mu.Lock()
		for i := from; i < len(l.lines); i++ {
			if match(l.lines[i]) {
				l.mu.Unlock()
				return i, nil
			}
		}
		from = max(from, len(l.lines))
		ch := l.changed
		l.mu.Unlock()
		select {
		case <-ch:
		case <-abort:
			return 0, errAborted
		case <-ctx.Done():
			return 0, ctx.Err()
		case <-deadline.C:
			return 0, fmt.Errorf("%w within %v", ErrNoLine, wait)
		}
	}
}

// Since returns the lines from index from on.
func (l *LineLog) Since(from int) []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	if from > len(l.lines) {
		return nil
	}
	return append([]string(nil), l.lines[from:]...)
}

// Tail returns the last n lines, joined by newlines, for failure messages.
func (l *LineLog) Tail(n int) string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return strings.Join(l.lines[max(0, len(l.lines)-n):], "\n")
}
