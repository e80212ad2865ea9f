package conformance

import (
	"testing"
	"time"
)

// The classes the suite changes. An [Output] must be able to write new
// versions of both; in a JVM they are the two classes whose values the
// application prints.
const (
	ClassA = "A"
	ClassB = "B"
)

// Agent is one running agent under test.
type Agent interface {
	// Port is the TCP port of the agent's status socket on 127.0.0.1.
	Port() int
	// PortFile is the absolute path of the port file the agent wrote, or ""
	// when it was started without one.
	PortFile() string
	// Output is where the agent observes class files: the suite's way to make
	// it see new bytes of ClassA and ClassB. It is never nil.
	Output() Output
	// App is the live JVM the agent is attached to, or nil when there is none
	// (the in-process fake); the live-reload cases need one.
	App() *App
	// Close stops the agent and everything it started. It is safe to call
	// more than once.
	Close()
}

// Output writes new versions of a class where the agent watches.
type Output interface {
	// Write makes version value of class observable by the agent, as a
	// compiler writing the build output would, and returns what was written.
	// It fails t when it cannot.
	Write(t testing.TB, class string, value int) Class
}

// Class is one class file as written by an [Output].
type Class struct {
	// Name is the binary class name.
	Name string
	// Path is the absolute path of the class file the agent captures.
	Path string
	// SHA256 is the lower-case hex SHA-256 of the bytes written to Path.
	SHA256 string
}

// Launcher starts a fresh agent for the suite and registers its teardown on
// t. [Run] calls it once, and again only when a failed case left the agent in
// a state the suite cannot reset (a hold it cannot release).
type Launcher func(t *testing.T) Agent

// Options tune [Run]. The zero value checks any conforming agent.
type Options struct {
	// Release, when set, is the release string the agent must report in
	// CONNECTED and DOCTOR agentVersion. "" accepts any non-blank release.
	Release string
	// Wait bounds every single wait of the suite: one reply, one state the
	// agent reaches asynchronously, one application line. 0 means 15 s. It is
	// a bound, never an assertion about speed.
	Wait time.Duration
	// Heartbeat is the agent's HEARTBEAT period: the heartbeat case waits at
	// most this long plus Wait for one. 0 means the protocol's 10 s.
	Heartbeat time.Duration
}

func (o Options) heartbeat() time.Duration {
	if o.Heartbeat <= 0 {
		return 10 * time.Second
	}
	return o.Heartbeat
}

func (o Options) wait() time.Duration {
	if o.Wait <= 0 {
		return 15 * time.Second
	}
	return o.Wait
}
