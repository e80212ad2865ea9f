package fakeagent

import (
	"context"
	"path/filepath"
	"time"
)

// Defaults of the agent (docs/agent-protocol.md#11).
const (
	// DefaultHeartbeat is the HEARTBEAT period.
	DefaultHeartbeat = 10 * time.Second
	// DefaultOutbox is the per-connection outbox capacity in lines.
	DefaultOutbox = 1000
	// DefaultMaxClients is the number of live connections served at once.
	DefaultMaxClients = 5
	// DefaultAgent is the agent release reported in CONNECTED and DOCTOR.
	DefaultAgent = "1.1.1"
	// DefaultHoldWarning is the age of a hold that triggers the one-time WARN.
	DefaultHoldWarning = 5 * time.Minute
	// MaxReceipts is the receipt ledger capacity; the oldest inserted is evicted.
	MaxReceipts = 512
)

// Config configures a fake agent. The zero value is a fully initialised
// agent release 1.1.1 on 127.0.0.1 with an ephemeral port and no port file.
type Config struct {
	// Host is the loopback address to listen on. "" means "127.0.0.1"; "::1"
	// reproduces a JVM that prefers IPv6 (docs/agent-protocol.md#1.1).
	Host string
	// Port is the TCP port. 0 (the default) picks an ephemeral port.
	Port int
	// PortFile is where the port is written (temp file + rename, no newline,
	// parent directories created). "" writes no port file. A symlink at that
	// path is not written through (the agent refuses and keeps serving); see
	// [Server.PortFileWritten].
	PortFile string
	// Agent is the release string of CONNECTED and DOCTOR. "" means "1.1.1".
	Agent string
	// EOL terminates every agent line. "" means "\n"; "\r\n" reproduces an
	// agent on Windows.
	EOL string
	// Heartbeat is the HEARTBEAT period. 0 means 10 s; negative disables it.
	Heartbeat time.Duration
	// HoldWarning is how old a hold gets before the one-time WARN "Build
	// result missing after five minutes; …". 0 means 5 min; negative disables.
	HoldWarning time.Duration
	// Outbox is the per-connection outbox capacity in lines. 0 means 1000.
	Outbox int
	// MaxClients is the number of live connections served. 0 means 5; a
	// connection beyond it is closed without CONNECTED.
	MaxClients int
	// SessionID is the receipt-ledger session. "" means a fresh random UUID.
	SessionID string
	// Unwired lists capabilities not wired yet (docs/agent-protocol.md#9). The zero value is a fully
	// initialised agent; see [Stage] for the start-up windows.
	Unwired Unwired
	// Doctor is the DOCTOR evidence. Zero fields get defaults (see [Evidence]).
	Doctor Evidence
	// Hold is the hold present when the agent starts. The zero value is no hold.
	Hold InitialHold
	// Paused starts the agent with automatic reload paused (docs/agent-protocol.md#6).
	Paused bool
	// PendingActions is the initial pendingActions count of RELOAD_STATE.
	PendingActions int
	// Acceptance decides how the asynchronous capture after an ACKed owned
	// `BUILD ok` ends (docs/agent-protocol.md#5). nil means [AcceptSuccess] right away. It runs on the
	// fake's single reload goroutine and may block to keep the acceptance
	// pending; ctx is cancelled when the server closes.
	Acceptance func(ctx context.Context, owner string) Outcome
	// RestartLedger is the restart-ledger digest PENDING reports after the
	// state line. Empty means "Nothing from this session needs a restart.".
	RestartLedger []string
	// Faults injects misbehaviour (docs/agent-protocol.md#13.2). The zero value is a correct agent.
	Faults Faults
	// OnCommand, when set, is called with every received command line (as read,
	// before stripping) and its connection id, on the connection's goroutine.
	OnCommand func(conn int, line string)
	// Logf, when set, receives diagnostics such as the symlink refusal.
	Logf func(format string, args ...any)
}

// InitialHold is a hold installed before any client connects.
type InitialHold struct {
	// Holding installs the hold.
	Holding bool
	// Owner names the hold's owner; "" makes it a legacy (unowned) hold.
	Owner string
}

// Unwired lists agent capabilities that are not wired (docs/agent-protocol.md#4.1, docs/agent-protocol.md#9). A true field
// makes the agent behave like one in an earlier start-up stage or like an
// older release. The zero value is a fully initialised agent.
type Unwired struct {
	// Verifier: VERIFY ignored, DOCTOR verifySupported:false and sessionId "".
	Verifier bool
	// Diagnoser: DIAGNOSE ignored.
	Diagnoser bool
	// Scanner: SCAN is a no-op, DOCTOR scanSupported:false.
	Scanner bool
	// Health: HEALTH answers a reduced report without the directory line.
	Health bool
	// OwnedBuild: owned BUILD ignored, unowned BUILD goes to the legacy
	// listener, DOCTOR buildOwnershipSupported:false.
	OwnedBuild bool
	// LegacyBuild: with OwnedBuild also set, every BUILD is ignored.
	LegacyBuild bool
	// DoctorContext: DOCTOR watcherState and buildHold "unavailable".
	DoctorContext bool
	// ReloadControl: RELOAD ignored, PENDING has no state line.
	ReloadControl bool
	// AckWithoutOwner makes the agent a pre-ownership release: BUILD replies
	// never carry the " owner=<owner>" suffix.
	AckWithoutOwner bool
}

// Stage returns the wiring of the agent after start-up step n of docs/agent-protocol.md#9:
// 1 = server only, 2 = verifier and diagnoser, 3 = watcher (SCAN, HEALTH),
// 4 and above = reload queue (owned BUILD, RELOAD, DOCTOR context): fully wired.
func Stage(n int) Unwired {
	u := Unwired{Verifier: true, Diagnoser: true, Scanner: true, Health: true,
		OwnedBuild: true, LegacyBuild: true, DoctorContext: true, ReloadControl: true}
	if n >= 2 {
		u.Verifier, u.Diagnoser = false, false
	}
	if n >= 3 {
		u.Scanner, u.Health = false, false
	}
	if n >= 4 {
		u = Unwired{}
	}
	return u
}

// Outcome is how an asynchronous acceptance of `BUILD ok` ends (docs/agent-protocol.md#5).
type Outcome int

const (
	// AcceptSuccess captures the pending class files and releases the hold.
	AcceptSuccess Outcome = iota
	// AcceptScanError makes the immediate scan fail: an ERROR line, hold kept.
	AcceptScanError
	// AcceptReadError makes the capture fail to read a class file: an ERROR
	// "Failed to read class file …" line, pending restored, hold and owner kept.
	AcceptReadError
	// AcceptSuperseded reports "A later build superseded this success; files
	// remain held" and keeps the hold, as when a newer start won meanwhile.
	AcceptSuperseded
)

// String returns the flag spelling of o.
func (o Outcome) String() string {
	switch o {
	case AcceptSuccess:
		return "success"
	case AcceptScanError:
		return "scan-error"
	case AcceptReadError:
		return "read-error"
	case AcceptSuperseded:
		return "superseded"
	}
	return "unknown"
}

// Option changes the Config of [NewServer].
type Option func(*Config)

// WithConfig replaces the whole configuration (the port file default of
// NewServer still applies when cfg.PortFile is "").
func WithConfig(cfg Config) Option { return func(c *Config) { *c = cfg } }

// WithIPv6 listens on [::1] instead of 127.0.0.1.
func WithIPv6() Option { return func(c *Config) { c.Host = "::1" } }

// WithPort listens on a fixed port.
func WithPort(port int) Option { return func(c *Config) { c.Port = port } }

// WithPortFile writes the port file at path instead of
// <t.TempDir()>/.reclazz/agent.port.
func WithPortFile(path string) Option { return func(c *Config) { c.PortFile = path } }

// WithoutPortFile writes no port file (clients must be given the port).
func WithoutPortFile() Option { return func(c *Config) { c.PortFile = noPortFile } }

// noPortFile marks WithoutPortFile for NewServer; it is never a real path.
const noPortFile = "\x00none"

// WithAgent sets the release string of CONNECTED and DOCTOR.
func WithAgent(release string) Option { return func(c *Config) { c.Agent = release } }

// WithCRLF terminates agent lines with "\r\n" (an agent on Windows).
func WithCRLF() Option { return func(c *Config) { c.EOL = "\r\n" } }

// WithHeartbeat sets the HEARTBEAT period; negative disables heartbeats.
func WithHeartbeat(d time.Duration) Option { return func(c *Config) { c.Heartbeat = d } }

// WithOutbox sets the per-connection outbox capacity.
func WithOutbox(lines int) Option { return func(c *Config) { c.Outbox = lines } }

// WithUnwired sets the capabilities that are not wired.
func WithUnwired(u Unwired) Option { return func(c *Config) { c.Unwired = u } }

// WithDoctor sets the DOCTOR evidence.
func WithDoctor(e Evidence) Option { return func(c *Config) { c.Doctor = e } }

// WithHold starts the agent holding for owner ("" = a legacy hold).
func WithHold(owner string) Option {
	return func(c *Config) { c.Hold = InitialHold{Holding: true, Owner: owner} }
}

// WithPaused starts the agent with automatic reload paused.
func WithPaused() Option { return func(c *Config) { c.Paused = true } }

// WithAcceptance sets the acceptance hook of owned `BUILD ok`.
func WithAcceptance(f func(ctx context.Context, owner string) Outcome) Option {
	return func(c *Config) { c.Acceptance = f }
}

// WithFaults sets the fault knobs.
func WithFaults(f Faults) Option { return func(c *Config) { c.Faults = f } }

// WithReply adds a reply hook after any already configured.
func WithReply(f ReplyFunc) Option {
	return func(c *Config) { c.Faults.Reply = Chain(c.Faults.Reply, f) }
}

// WithSessionID fixes the receipt-ledger session id.
func WithSessionID(id string) Option { return func(c *Config) { c.SessionID = id } }

// defaultPortFile is where NewServer writes the port file under base.
func defaultPortFile(base string) string { return filepath.Join(base, ".reclazz", "agent.port") }

// WithConfigFunc edits the configuration in place.
func WithConfigFunc(f func(*Config)) Option { return Option(f) }
