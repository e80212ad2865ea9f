// Package lockedbuf is a byte buffer that one goroutine may write while
// another reads it: what a child process, a terminal or a logger writes,
// read by a test or the harness as it arrives.
package lockedbuf

import (
	"bytes"
	"sync"
)

// Buffer is a bytes.Buffer whose Write and String may run concurrently. The
// zero value is an empty buffer.
type Buffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

// Write appends p.
func (b *Buffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.Write(p)
}

// String returns everything written so far.
func (b *Buffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.String()
}
