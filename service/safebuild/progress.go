package safebuild

import (
	"sync"
	"time"
)

// ProgressInterval is the shortest time between two progress reports: at
// most 5 a second (docs/safe-build.md#5).
const ProgressInterval = 200 * time.Millisecond

// ProgressFunc receives one progress report: the output lines so far and
// the latest of them, cut to MessageChars characters. Reports come from one
// goroutine, never after the build's Run returned, and lines grows with
// every report.
type ProgressFunc func(lines int, message string)

// limiter turns the capture's completed lines into at most one report per
// interval. The first line is reported at once; lines that arrive within an
// interval after a report are reported together at its end.
type limiter struct {
	report   ProgressFunc
	read     func() (int, string)
	interval time.Duration
	kick     chan struct{}
	stop     chan struct{}
	done     chan struct{}
	once     sync.Once
}

func newLimiter(report ProgressFunc, read func() (int, string), interval time.Duration) *limiter {
	l := &limiter{report: report, read: read, interval: interval,
		kick: make(chan struct{}, 1), stop: make(chan struct{}), done: make(chan struct{})}
	go l.loop()
	return l
}

// line says that a line was completed; it never blocks.
func (l *limiter) line() {
	select {
	case l.kick <- struct{}{}:
	default:
	}
}

// close stops reporting and waits until no report is running.
func (l *limiter) close() {
	l.once.Do(func() { close(l.stop) })
	<-l.done
}

func (l *limiter) loop() {
	defer close(l.done)
	sent := 0
	timer := time.NewTimer(0)
	<-timer.C
	defer timer.Stop()
	for {
		select {
		case <-l.kick:
		case <-l.stop:
			return
		}
		lines, msg := l.read()
		if lines <= sent {
			continue
		}
		l.report(lines, msg)
		sent = lines
		// Wait out the interval; kicks meanwhile wait in the channel.
		timer.Reset(l.interval)
		select {
		case <-timer.C:
		case <-l.stop:
			return
		}
	}
}
