package fakeagent

import (
	"context"
	"fmt"
	"time"

	"github.com/buildguard/buildguard/agentproto"
)

// holdState is the agent-wide BUILD hold (docs/agent-protocol.md#5).
type holdState struct {
	holding    bool
	owner      string // "" = legacy (unowned) hold
	generation uint64
	since      time.Time
	warned     bool
}

// pendingClass is a class file observed but not admitted (held or paused).
type pendingClass struct {
	class, path string
	data        []byte
}

// Hold names of DOCTOR / RELOAD_STATE.
const (
	HoldNone   = "none"
	HoldNamed  = "named"
	HoldLegacy = "legacy"
)

// holdNameLocked is the public name of the hold state.
func (s *Server) holdNameLocked() string {
	switch {
	case !s.hold.holding:
		return HoldNone
	case s.hold.owner == "":
		return HoldLegacy
	}
	return HoldNamed
}

// Hold reports whether the agent holds and the owner ("" for a legacy hold).
func (s *Server) Hold() (holding bool, owner string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.hold.holding, s.hold.owner
}

// HoldState is "none", "named" or "legacy".
func (s *Server) HoldState() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.holdNameLocked()
}

// Generation is the hold generation counter (incremented by every accepted
// `started`/`failed`).
func (s *Server) Generation() uint64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.hold.generation
}

// WaitHold waits until the hold state is want ("none", "named", "legacy").
func (s *Server) WaitHold(ctx context.Context, want string) error {
	return s.waitFor(ctx, "hold "+want, func() bool { return s.HoldState() == want })
}

// SetHold installs (owner "" = legacy) a hold as if a build had started.
func (s *Server) SetHold(owner string) {
	s.mu.Lock()
	fresh := !s.hold.holding
	s.hold.holding, s.hold.owner = true, owner
	s.hold.generation++
	s.hold.since, s.hold.warned = now(), false
	if fresh {
		s.armHoldWarningLocked()
	}
	s.mu.Unlock()
	s.notify()
}

// ReleaseHold drops the hold without capturing anything (as an agent restart
// would); pending class files stay pending.
func (s *Server) ReleaseHold() {
	s.mu.Lock()
	s.hold.holding, s.hold.owner = false, ""
	s.mu.Unlock()
	s.notify()
}

// Paused reports the manual pause flag.
func (s *Server) Paused() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.paused
}

// SetPaused sets the manual pause flag as RELOAD pause/resume would (resume
// also admits pending class files when no hold is present).
func (s *Server) SetPaused(paused bool) {
	s.mu.Lock()
	s.setPausedLocked(paused)
	s.mu.Unlock()
	s.notify()
	if !paused {
		s.submit(s.scanNow)
	}
}

// setPausedLocked sets the pause flag; on resume the caller submits scanNow.
func (s *Server) setPausedLocked(paused bool) {
	if paused && !s.paused {
		s.pauseEpoch++
	}
	s.paused = paused
}

// SetPending sets counts reported in addition to the class files added with
// AddPendingClass: extra pendingClasses and the pendingActions count (docs/agent-protocol.md#6).
func (s *Server) SetPending(classes, actions int) {
	s.mu.Lock()
	s.extraClass, s.actions = classes, actions
	s.mu.Unlock()
}

// Pending returns the reported pendingClasses and pendingActions counts.
func (s *Server) Pending() (classes, actions int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.pending) + s.extraClass, s.actions
}

// AddPendingClass makes the agent observe a class file, as its watcher
// would: while a hold or a pause is active the file waits in the pending map
// (coalesced per path, newest wins); otherwise it is reloaded at once as a
// one-class batch whose receipt ends `applied`.
func (s *Server) AddPendingClass(class, path string, data []byte) {
	s.mu.Lock()
	pc := pendingClass{class: class, path: path, data: append([]byte(nil), data...)}
	if s.hold.holding || s.paused {
		s.addPendingLocked(pc)
	} else {
		s.applyLocked([]pendingClass{pc})
	}
	s.mu.Unlock()
	s.notify()
}

func (s *Server) addPendingLocked(pc pendingClass) {
	for i, p := range s.pending {
		if p.path == pc.path {
			s.pending[i] = pc
			return
		}
	}
	s.pending = append(s.pending, pc)
}

// scanNow is the watcher's immediate scan on the reload thread: pending class
// files are admitted unless a hold or a pause gates them.
func (s *Server) scanNow() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.hold.holding || s.paused || len(s.pending) == 0 {
		return
	}
	batch := s.pending
	s.pending = nil
	s.applyLocked(batch)
}

// applyLocked reloads captured class files as one batch: receipts start
// `running`, the reload lines are broadcast, and the receipts end `applied`.
func (s *Server) applyLocked(batch []pendingClass) {
	if len(batch) == 0 {
		return
	}
	start := time.Now()
	entries := make([]BatchEntry, len(batch))
	for i, p := range batch {
		entries[i] = BatchEntry{Class: p.class, Source: p.path, Bytes: p.data}
	}
	id := s.startBatchLocked(entries)
	if len(batch) > 1 {
		s.broadcast(agentproto.LevelInfo, fmt.Sprintf("%d class files changed together; reloading them as one batch", len(batch)))
	}
	for _, p := range batch {
		s.broadcast(agentproto.LevelReload, fmt.Sprintf("Reloaded %s (1ms)", p.class))
		s.reloads++
	}
	if len(batch) > 1 {
		s.broadcast(agentproto.LevelInfo, fmt.Sprintf("Batch of %d class files done (%dms)", len(batch), time.Since(start).Milliseconds()))
	}
	s.finishBatchLocked(id, "", StatusApplied, detailApplied)
}

// buildLocked runs the docs/agent-protocol.md#5 transition for (owner, state) and reports whether it
// was accepted; owner "" is an unowned command. legacy selects the legacy
// listener of agents without the owned one (always accepted). For an accepted
// `ok` it returns the scheduling of the asynchronous acceptance, which the
// caller runs after enqueuing the reply so the ACK precedes its effects.
func (s *Server) buildLocked(owner, state string, legacy bool) (accepted bool, schedule func()) {
	h := &s.hold
	if !legacy {
		switch {
		case h.holding && h.owner != owner:
			return false, nil
		case !h.holding && owner != "" && state != "started":
			return false, nil
		}
	}
	switch state {
	case "started", "failed":
		fresh := !h.holding
		h.generation++
		h.holding = true
		h.owner = owner
		if fresh || state == "started" {
			h.since, h.warned = now(), false
			s.armHoldWarningLocked()
		}
		s.broadcast(agentproto.LevelInfo, fmt.Sprintf("Build %s; holding %d class files until BUILD ok", state, len(s.pending)))
	case "ok":
		if !h.holding {
			return true, func() { s.submit(s.scanNow) }
		}
		gen := h.generation
		return true, func() { s.submit(func() { s.acceptBuild(owner, gen) }) }
	}
	return true, nil
}

// acceptBuild is the asynchronous acceptance of `BUILD ok` (docs/agent-protocol.md#5 steps 1–6).
func (s *Server) acceptBuild(owner string, gen uint64) {
	s.mu.Lock()
	if !s.hold.holding || s.hold.generation != gen {
		s.mu.Unlock()
		return
	}
	hook := s.acceptance
	epoch := s.pauseEpoch
	s.accepting++
	s.mu.Unlock()
	outcome := AcceptSuccess
	if hook != nil {
		outcome = hook(s.ctx, owner)
	}
	s.mu.Lock()
	defer s.notify()
	defer s.mu.Unlock()
	s.accepting--
	if s.ctx.Err() != nil {
		return
	}
	if outcome == AcceptScanError {
		s.broadcast(agentproto.LevelError, "Reload task failed: the scan of the build output failed")
		return
	}
	if outcome == AcceptSuperseded || !s.hold.holding || s.hold.generation != gen {
		s.broadcast(agentproto.LevelInfo, "A later build superseded this success; files remain held")
		return
	}
	if outcome == AcceptReadError {
		path := "build/classes/java/main/Missing.class"
		if len(s.pending) > 0 {
			path = s.pending[0].path
		}
		s.broadcast(agentproto.LevelError, "Failed to read class file "+path+": java.nio.file.NoSuchFileException: "+path)
		return
	}
	s.hold.holding, s.hold.owner = false, ""
	if s.paused || s.pauseEpoch != epoch || len(s.pending) == 0 {
		return
	}
	batch := s.pending
	s.pending = nil
	s.applyLocked(batch)
}

// armHoldWarningLocked schedules the one-time WARN for a hold that lasts
// longer than Config.HoldWarning (docs/agent-protocol.md#3.3, docs/agent-protocol.md#5).
func (s *Server) armHoldWarningLocked() {
	d := s.cfg.HoldWarning
	if d <= 0 {
		return
	}
	if s.holdTimer != nil {
		s.holdTimer.Stop()
	}
	s.holdTimer = time.AfterFunc(d, s.checkHoldWarning)
}

// checkHoldWarning emits the hold WARN once per hold, or re-arms itself when
// the hold's start was reset meanwhile.
func (s *Server) checkHoldWarning() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.ctx.Err() != nil || !s.hold.holding || s.hold.warned {
		return
	}
	age := time.Since(s.hold.since)
	if age < s.cfg.HoldWarning {
		s.holdTimer = time.AfterFunc(s.cfg.HoldWarning-age, s.checkHoldWarning)
		return
	}
	s.hold.warned = true
	s.broadcast(agentproto.LevelWarn, fmt.Sprintf("Build result missing after five minutes; Build holding %d class files since %s; waiting for BUILD ok",
		len(s.pending), Timestamp(s.hold.since)))
}
