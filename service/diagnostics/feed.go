package diagnostics

import (
	"sync"
	"time"
)

// DefaultFeedBytes is the most output a Feed holds for its parser; output
// written while it holds that much is not parsed.
const DefaultFeedBytes = 4 << 20

// feedChunk bounds one piece of queued output, so that stopping waits for
// at most one piece's parse.
const feedChunk = 64 << 10

// maxFeedWait bounds one wait of Write for room in the queue.
const maxFeedWait = time.Second

// Feed passes a build's output to a Parser on a goroutine of its own, so
// that the writer (the reader of the build's pipes) is never held up for
// long by parsing (docs/safe-build.md#12): Write copies the bytes into a
// bounded queue and returns. When the queue is full, Write waits for the
// parser to make room, for at most maxFeedWait at a time and at most as
// long in all as the time spent outside these waits since the first
// write, so a parser slower than the build at most halves the rate its
// output is read at. Output that still finds the queue full is not parsed (it stays in
// the log), and the parser resumes at the next whole line. The goroutine
// runs only while the queue holds output. A Feed is safe for concurrent
// use.
type Feed struct {
	p   *Parser
	max int

	mu      sync.Mutex
	queue   []chunk
	queued  int           // bytes in queue and in the piece being parsed
	gap     bool          // output was dropped since the last piece queued
	gapLine bool          // … and it ended with a newline
	idle    chan struct{} // closed when the goroutine stops; nil while none runs
	room    chan struct{} // closed when the parser finished a piece; nil while no Write waits
	stopped bool          // Summary gave up waiting: nothing more is parsed
	dropped int64         // bytes not parsed
	began   time.Time     // the first write
	waited  time.Duration // the time writes spent waiting for room

	pmu   sync.Mutex   // held while the parser reads
	parse func([]byte) // p.Write; a test makes it wait
}

// pieces holds the buffers of queued output for reuse.
var pieces = sync.Pool{New: func() any { b := make([]byte, 0, feedChunk); return &b }}

type chunk struct {
	b       *[]byte
	gap     bool // output before it was dropped
	gapLine bool // … and that output ended with a newline
}

// NewFeed returns a Feed into p that holds at most maxBytes of output (0
// means DefaultFeedBytes). p must be fed through the Feed only.
func NewFeed(p *Parser, maxBytes int) *Feed {
	if maxBytes <= 0 {
		maxBytes = DefaultFeedBytes
	}
	f := &Feed{p: p, max: maxBytes}
	f.parse = func(b []byte) { p.Write(b) }
	return f
}

// Write implements io.Writer. It never fails, and waits for the parser
// only within the Feed's share of the time (Feed).
func (f *Feed) Write(b []byte) (int, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.waitForRoom(len(b))
	if f.stopped || f.queued+len(b) > f.max {
		f.dropped += int64(len(b))
		f.gap = true
		if len(b) > 0 {
			f.gapLine = b[len(b)-1] == '\n'
		}
		return len(b), nil
	}
	for rest := b; len(rest) > 0; {
		n := min(len(rest), feedChunk)
		buf := pieces.Get().(*[]byte)
		*buf = append((*buf)[:0], rest[:n]...)
		f.queue = append(f.queue, chunk{b: buf, gap: f.gap, gapLine: f.gapLine})
		f.gap = false
		rest = rest[n:]
	}
	f.queued += len(b)
	if f.idle == nil && len(f.queue) > 0 {
		f.idle = make(chan struct{})
		go f.drain(f.idle)
	}
	return len(b), nil
}

// waitForRoom waits, with f.mu held on entry and on return, until the
// queue has room for n bytes, the parser stopped, or the writes' share of
// the time is spent: their waits take in all at most as long as the time
// outside them since the first write, and one write waits at most
// maxFeedWait. Output larger than the queue never waits.
func (f *Feed) waitForRoom(n int) {
	now := time.Now()
	if f.began.IsZero() {
		f.began = now
	}
	if f.stopped || n > f.max || f.queued+n <= f.max {
		return
	}
	// waited+d <= (now+d-began)-(waited+d): d <= elapsed - 2*waited.
	d := min(now.Sub(f.began)-2*f.waited, maxFeedWait)
	if d <= 0 {
		return
	}
	t := time.NewTimer(d)
	defer t.Stop()
	for !f.stopped && f.queued+n > f.max {
		if f.room == nil {
			f.room = make(chan struct{})
		}
		room := f.room
		f.mu.Unlock()
		timedOut := false
		select {
		case <-room:
		case <-t.C:
			timedOut = true
		}
		f.mu.Lock()
		if timedOut {
			break
		}
	}
	f.waited += time.Since(now)
}

// madeRoom wakes the writes waiting for room; f.mu is held.
func (f *Feed) madeRoom() {
	if f.room != nil {
		close(f.room)
		f.room = nil
	}
}

// drain parses the queued output until the queue is empty.
func (f *Feed) drain(idle chan struct{}) {
	for {
		f.mu.Lock()
		if len(f.queue) == 0 || f.stopped {
			for _, c := range f.queue {
				f.dropped += int64(len(*c.b))
				pieces.Put(c.b)
			}
			f.queue, f.queued, f.idle = nil, 0, nil
			close(idle)
			f.madeRoom()
			f.mu.Unlock()
			return
		}
		c := f.queue[0]
		f.queue[0] = chunk{}
		f.queue = f.queue[1:]
		f.mu.Unlock()
		f.pmu.Lock()
		if c.gap {
			f.p.lost(!c.gapLine)
		}
		f.parse(*c.b)
		f.pmu.Unlock()
		f.mu.Lock()
		f.queued -= len(*c.b)
		f.madeRoom()
		f.mu.Unlock()
		pieces.Put(c.b)
	}
}

// Summary waits up to wait for the parser to read the output written so
// far and returns what it found, with the bytes of output it did not read
// (dropped while the queue was full, or still queued when wait ran out:
// the parser then stops after the piece it is reading).
func (f *Feed) Summary(wait time.Duration) (Summary, int64) {
	f.mu.Lock()
	idle := f.idle
	f.mu.Unlock()
	if idle != nil {
		t := time.NewTimer(wait)
		select {
		case <-idle:
		case <-t.C:
			f.mu.Lock()
			f.stopped = true
			f.madeRoom()
			f.mu.Unlock()
			<-idle // at most one piece of feedChunk bytes is being parsed
		}
		t.Stop()
	}
	f.pmu.Lock()
	s := f.p.Summary()
	f.pmu.Unlock()
	f.mu.Lock()
	defer f.mu.Unlock()
	return s, f.dropped
}
