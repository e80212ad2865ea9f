package fakeagent

import (
	"os"
	"strconv"
	"strings"

	"github.com/buildguard/buildguard/agentproto"
)

// Watcher states of DOCTOR.
const (
	WatcherStarting    = "starting"
	WatcherWatching    = "watching"
	WatcherStopped     = "stopped"
	WatcherUnavailable = "unavailable"
)

const (
	doctorDetail      = "Point-in-time agent evidence; it does not prove that any class was reloaded"
	doctorUnavailable = "Doctor evidence unavailable or exceeds bounded message size"
	maxDoctorString   = 512
	maxDoctorJSON     = 3900
	maxDoctorSample   = 8
	maxDoctorPath     = 256
)

// Evidence is what DOCTOR reports about the JVM and its watcher (docs/agent-protocol.md#7). Zero
// fields get the documented defaults.
type Evidence struct {
	// PID is the decimal pid string. "" means this process's pid.
	PID string
	// JavaVersion is java.version. "" means "17.0.12".
	JavaVersion string
	// VMName is java.vm.name. "" means "OpenJDK 64-Bit Server VM".
	VMName string
	// WorkingDirectory is the JVM's user.dir. "" means the NewServer base
	// directory, or the current directory for Start.
	WorkingDirectory string
	// WatcherState is starting, watching, stopped (or any text, for faults).
	// "" means "watching". DoctorContext unwired reports "unavailable".
	WatcherState string
	// WatchedDirectories are the registrations, in order; the first 8 of at
	// most 256 chars form the sample. nil means none.
	WatchedDirectories []string
	// WatchedDirectoryCount is the live registration count; values below
	// len(WatchedDirectories) mean len(WatchedDirectories).
	WatchedDirectoryCount int
	// UnwatchableDirectoryCount is the refused registration count.
	UnwatchableDirectoryCount int
	// Unavailable makes DOCTOR answer status "unavailable", as when the
	// evidence would break a bound or a supplier throws.
	Unavailable bool
}

// SetDoctor replaces the DOCTOR evidence (zero fields get defaults).
func (s *Server) SetDoctor(e Evidence) {
	s.mu.Lock()
	if e.WorkingDirectory == "" {
		e.WorkingDirectory = s.cfg.Doctor.WorkingDirectory
	}
	s.evidence = e
	s.mu.Unlock()
}

// Doctor returns the current DOCTOR evidence.
func (s *Server) Doctor() Evidence {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.evidence
}

// doctorJSONLocked renders the DOCTOR_RESULT payload in the exact field order
// of docs/agent-protocol.md#7, or the unavailable object when a bound would break.
func (s *Server) doctorJSONLocked(token string) string {
	unavailable := `{"requestId":"` + token + `","status":"unavailable","detail":"` + doctorUnavailable + `"}`
	e := s.evidence
	if e.Unavailable {
		return unavailable
	}
	pid := e.PID
	if pid == "" {
		pid = strconv.Itoa(os.Getpid())
	}
	java := e.JavaVersion
	if java == "" {
		java = "17.0.12"
	}
	vm := e.VMName
	if vm == "" {
		vm = "OpenJDK 64-Bit Server VM"
	}
	watcher, hold := e.WatcherState, s.holdNameLocked()
	if watcher == "" {
		watcher = WatcherWatching
	}
	u := s.unwired
	if u.DoctorContext {
		watcher, hold = WatcherUnavailable, "unavailable"
	}
	session := s.session
	if u.Verifier {
		session = ""
	}
	var sample []string
	for _, d := range e.WatchedDirectories {
		if agentproto.UTF16Len(d) <= maxDoctorPath && len(sample) < maxDoctorSample {
			sample = append(sample, d)
		}
	}
	count := max(e.WatchedDirectoryCount, len(e.WatchedDirectories))
	for _, v := range []string{token, session, s.cfg.Agent, pid, java, vm, e.WorkingDirectory} {
		if agentproto.UTF16Len(v) > maxDoctorString {
			return unavailable
		}
	}
	var b strings.Builder
	str := func(k, v string) { b.WriteString(`"` + k + `":"` + Escape(v) + `",`) }
	num := func(k string, v int) { b.WriteString(`"` + k + `":` + strconv.Itoa(v) + `,`) }
	boolean := func(k string, v bool) { b.WriteString(`"` + k + `":` + strconv.FormatBool(v) + `,`) }
	b.WriteByte('{')
	str("requestId", token)
	str("status", "observed")
	str("detail", doctorDetail)
	str("sessionId", session)
	str("agentVersion", s.cfg.Agent)
	str("pid", pid)
	str("javaVersion", java)
	str("vmName", vm)
	str("workingDirectory", e.WorkingDirectory)
	str("watcherState", watcher)
	str("buildHold", hold)
	num("watchedDirectoryCount", count)
	num("unwatchableDirectoryCount", e.UnwatchableDirectoryCount)
	boolean("watchSampleTruncated", count > len(sample))
	b.WriteString(`"watchedDirectories":[`)
	for i, d := range sample {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(`"` + Escape(d) + `"`)
	}
	b.WriteString(`],`)
	boolean("buildOwnershipSupported", !u.OwnedBuild)
	boolean("verifySupported", !u.Verifier)
	boolean("scanSupported", !u.Scanner)
	b.WriteString(`"reloadConfirmed":false}`)
	if agentproto.UTF16Len(b.String()) > maxDoctorJSON {
		return unavailable
	}
	return b.String()
}
