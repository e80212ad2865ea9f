package fakeagent

import (
	"fmt"
	"strings"
	"time"
	"unicode"

	"github.com/buildguard/buildguard/agentproto"
)

// handle dispatches one command line in the exact order of docs/agent-protocol.md#4.1. Anything
// that does not match a grammar is ignored silently.
func (s *Server) handle(c *conn, raw string) {
	s.record(c, raw)
	s.mu.Lock()
	f := s.faults
	s.mu.Unlock()
	if f.DisconnectOn != nil && f.DisconnectOn(raw) {
		c.close(f.RST)
		return
	}
	l := javaStrip(raw)
	if agentproto.UTF16Len(l) > agentproto.MaxCommandChars {
		return
	}
	switch {
	case strings.HasPrefix(l, "RELOAD "):
		s.handleReload(c, l, f)
	case strings.HasPrefix(l, "DOCTOR "):
		s.handleDoctor(c, l, f)
	case strings.HasPrefix(l, "VERIFY "):
		s.handleVerify(c, l, f)
	case foldPrefix(l, "BUILD "):
		s.handleBuild(c, l, f)
	case foldEqual(l, "PENDING"):
		s.handlePending(c, l, f)
	case foldEqual(l, "SCAN"):
		s.handleScan(c, l, f)
	case foldEqual(l, "HEALTH"):
		s.handleHealth(c, l, f)
	case foldPrefix(l, "DIAGNOSE"):
		s.handleDiagnose(c, l, f)
	}
}

// answers reports whether the command line l of kind gets its reply: the
// component that answers it is wired (off reads its Unwired switch) and no
// fault of f fails it.
func (s *Server) answers(off func(Unwired) bool, f Faults, kind Kind, l string) bool {
	s.mu.Lock()
	wired := !off(s.unwired)
	s.mu.Unlock()
	return wired && !s.failed(f, kind, l)
}

// failed applies the Fail fault: a handler that "throws" broadcasts
// WARN "Could not answer <command>: <reason>" and sends no reply.
func (s *Server) failed(f Faults, kind Kind, l string) bool {
	if f.Fail == nil {
		return false
	}
	if err := f.Fail(kind, l); err != nil {
		s.broadcast(agentproto.LevelWarn, "Could not answer "+l+": "+err.Error())
		return true
	}
	return false
}

// handleBuild implements docs/agent-protocol.md#4.7.
func (s *Server) handleBuild(c *conn, l string, f Faults) {
	rest := javaStrip(string([]rune(l)[len("BUILD "):]))
	parts := javaSplit(rest)
	if len(parts) == 0 || len(parts) > 3 {
		return
	}
	var state string
	for _, st := range []string{"started", "ok", "failed"} {
		if foldEqual(parts[0], st) {
			state = st
		}
	}
	var request, owner string
	var haveRequest, haveOwner bool
	for _, p := range parts[1:] {
		switch {
		case strings.HasPrefix(p, "request=") && !haveRequest:
			request, haveRequest = p[len("request="):], true
			if !agentproto.ValidToken(request) {
				return
			}
		case strings.HasPrefix(p, "owner=") && !haveOwner:
			owner, haveOwner = p[len("owner="):], true
			if !agentproto.ValidToken(owner) {
				return
			}
		default:
			return
		}
	}
	if haveOwner && !haveRequest || state == "" {
		return
	}
	if s.failed(f, KindBuild, l) {
		return
	}
	s.mu.Lock()
	u := s.unwired
	var accepted bool
	var schedule func()
	switch {
	case f.RejectBuild != nil && f.RejectBuild(state, owner):
		accepted = false
	case !u.OwnedBuild:
		accepted, schedule = s.buildLocked(owner, state, false)
	case owner == "" && !u.LegacyBuild:
		accepted, schedule = s.buildLocked("", state, true)
	default:
		s.mu.Unlock()
		return
	}
	s.mu.Unlock()
	s.notify()
	if schedule != nil {
		defer schedule()
	}
	if !haveRequest {
		return
	}
	kw := "BUILD_ACK"
	if !accepted {
		kw = "BUILD_REJECTED"
	}
	msg := kw + " " + request + " " + state
	if haveOwner && !u.AckWithoutOwner {
		msg += " owner=" + owner
	}
	s.reply(c, f, &Reply{Kind: KindBuild, Command: l, Conn: c.id, Token: request, State: state, Message: msg})
}

// handleReload implements docs/agent-protocol.md#4.8 and docs/agent-protocol.md#6.
func (s *Server) handleReload(c *conn, l string, f Faults) {
	parts := javaSplit(l)
	if len(parts) != 3 || !strings.HasPrefix(parts[2], "request=") {
		return
	}
	action, token := parts[1], parts[2][len("request="):]
	if action != "pause" && action != "resume" && action != "status" || !agentproto.ValidToken(token) {
		return
	}
	if !s.answers(func(u Unwired) bool { return u.ReloadControl }, f, KindReload, l) {
		return
	}
	s.mu.Lock()
	switch action {
	case "pause":
		s.setPausedLocked(true)
	case "resume":
		s.setPausedLocked(false)
		defer s.submit(s.scanNow) // after the reply: it is an admission snapshot
	}
	msg := fmt.Sprintf("RELOAD_STATE %s %s %s", token, action, s.reloadStateLocked())
	s.mu.Unlock()
	s.notify()
	s.reply(c, f, &Reply{Kind: KindReload, Command: l, Conn: c.id, Token: token, State: action, Message: msg})
}

// reloadStateLocked is the state part of RELOAD_STATE and the PENDING line.
func (s *Server) reloadStateLocked() string {
	return fmt.Sprintf("paused=%t pendingClasses=%d pendingActions=%d buildHold=%s",
		s.paused, len(s.pending)+s.extraClass, s.actions, s.holdNameLocked())
}

// handleDoctor implements docs/agent-protocol.md#4.9: the token is the whole remainder.
func (s *Server) handleDoctor(c *conn, l string, f Faults) {
	token := l[len("DOCTOR "):]
	if !agentproto.ValidToken(token) || s.failed(f, KindDoctor, l) {
		return
	}
	s.mu.Lock()
	payload := s.doctorJSONLocked(token)
	s.mu.Unlock()
	s.reply(c, f, &Reply{Kind: KindDoctor, Command: l, Conn: c.id, Token: token, Message: "DOCTOR_RESULT " + token + " " + payload})
}

// handleVerify implements docs/agent-protocol.md#4.10.
func (s *Server) handleVerify(c *conn, l string, f Faults) {
	parts := javaSplit(l)
	if len(parts) != 4 || !agentproto.ValidToken(parts[1]) || !agentproto.ValidClassName(parts[2]) || !agentproto.ValidSHA256(parts[3]) {
		return
	}
	if !s.answers(func(u Unwired) bool { return u.Verifier }, f, KindVerify, l) {
		return
	}
	s.mu.Lock()
	payload := s.verifyJSONLocked(parts[1], parts[2], parts[3])
	s.mu.Unlock()
	s.reply(c, f, &Reply{Kind: KindVerify, Command: l, Conn: c.id, Token: parts[1], Message: "VERIFY_RESULT " + parts[1] + " " + payload})
}

// handlePending implements docs/agent-protocol.md#4.4.
func (s *Server) handlePending(c *conn, l string, f Faults) {
	if s.failed(f, KindPending, l) {
		return
	}
	s.mu.Lock()
	var lines []string
	if !s.unwired.ReloadControl {
		lines = append(lines, "Automatic reload: "+s.reloadStateLocked())
	}
	if len(s.restart) == 0 {
		lines = append(lines, "Nothing from this session needs a restart.")
	} else {
		lines = append(lines, s.restart...)
	}
	s.mu.Unlock()
	s.queryReply(c, f, KindPending, l, lines)
}

// handleScan implements docs/agent-protocol.md#4.3: no reply; pending files are admitted unless a
// hold or a pause gates them.
func (s *Server) handleScan(c *conn, l string, f Faults) {
	if !s.answers(func(u Unwired) bool { return u.Scanner }, f, KindScan, l) {
		return
	}
	s.submit(s.scanNow)
}

// handleHealth implements docs/agent-protocol.md#4.5 (free text).
func (s *Server) handleHealth(c *conn, l string, f Faults) {
	if s.failed(f, KindHealth, l) {
		return
	}
	s.mu.Lock()
	if len(s.health) > 0 {
		lines := append([]string(nil), s.health...)
		s.mu.Unlock()
		s.queryReply(c, f, KindHealth, l, lines)
		return
	}
	lines := []string{fmt.Sprintf("Reclazz %s, up %d minutes.", s.cfg.Agent, int(time.Since(s.startedAt).Minutes()))}
	if s.reloads == 0 {
		lines = append(lines, "Nothing has reloaded yet this session.")
	} else {
		lines = append(lines, fmt.Sprintf("%d reloads: %d structural, %d method bodies.", s.reloads, s.structural, s.reloads-s.structural))
	}
	if !s.unwired.Health {
		e := s.evidence
		n := max(e.WatchedDirectoryCount, len(e.WatchedDirectories))
		dl := fmt.Sprintf("%d directories watched.", n)
		if e.UnwatchableDirectoryCount > 0 {
			dl = fmt.Sprintf("%d directories watched, and %d that could not be.", n, e.UnwatchableDirectoryCount)
		}
		lines = append(lines, dl)
	}
	if len(s.restart) == 0 {
		lines = append(lines, "Nothing is waiting on a restart.")
	} else {
		lines = append(lines, fmt.Sprintf("%d things waiting on a restart; ask PENDING for what.", len(s.restart)))
	}
	pc := len(s.pending) + s.extraClass
	if s.paused {
		lines = append(lines, fmt.Sprintf("Automatic reload paused; pending class files=%d, pending actions=%d", pc, s.actions))
	}
	if s.hold.holding {
		lines = append(lines, fmt.Sprintf("Build holding %d class files since %s; waiting for BUILD ok", pc, Timestamp(s.hold.since)))
	}
	s.mu.Unlock()
	s.queryReply(c, f, KindHealth, l, lines)
}

// handleDiagnose implements docs/agent-protocol.md#4.6: the argument is the rest after the eight
// keyword chars, stripped.
func (s *Server) handleDiagnose(c *conn, l string, f Faults) {
	if !s.answers(func(u Unwired) bool { return u.Diagnoser }, f, KindDiagnose, l) {
		return
	}
	name := javaStrip(string([]rune(l)[len("DIAGNOSE"):]))
	s.mu.Lock()
	custom := s.diagnose
	s.mu.Unlock()
	var lines []string
	if custom != nil {
		lines = custom(name)
	} else if name == "" {
		lines = []string{"Give a class name, for example DIAGNOSE com.acme.OrderService"}
	} else {
		lines = append(lines, "Reclazz diagnosis for "+name)
		s.mu.Lock()
		if i := s.ledger.find(name); i >= 0 {
			r := s.ledger.entries[i].receipt
			lines = append(lines, fmt.Sprintf("Last attempt: %s (%s) from %s", r.Status, r.Detail, r.Source))
		} else {
			lines = append(lines, "No reload attempt for "+name+" in this session.")
		}
		s.mu.Unlock()
	}
	s.queryReply(c, f, KindDiagnose, l, lines)
}

// queryReply broadcasts the INFO lines of PENDING/HEALTH/DIAGNOSE, each
// through the reply hook.
func (s *Server) queryReply(c *conn, f Faults, kind Kind, l string, lines []string) {
	for _, m := range lines {
		s.reply(c, f, &Reply{Kind: kind, Command: l, Conn: c.id, Message: m, Broadcast: true})
	}
}

// reply sends a reply (correlated: to the requester; query lines: broadcast)
// after the Reply hook had its say.
func (s *Server) reply(c *conn, f Faults, r *Reply) {
	r.Level = agentproto.LevelInfo
	if f.Reply != nil {
		f.Reply(r)
	}
	if r.Drop {
		return
	}
	eol := s.cfg.EOL
	ts := now()
	var before, main, after []string
	for _, e := range r.Before {
		before = append(before, EncodeLine(e.Level, e.Message, ts)+eol)
	}
	line := EncodeLine(r.Level, r.Message, ts) + eol
	if r.Raw != nil {
		line = ""
		for _, raw := range r.Raw {
			line += raw + eol
		}
	}
	for i := 0; i <= r.Copies; i++ {
		main = append(main, line)
	}
	for _, e := range r.After {
		after = append(after, EncodeLine(e.Level, e.Message, ts)+eol)
	}
	var items []outItem
	switch {
	case r.Coalesce:
		items = []outItem{{data: strings.Join(before, "") + strings.Join(main, "") + strings.Join(after, "")}}
	default:
		for _, b := range before {
			items = append(items, outItem{data: b})
		}
		for _, m := range main {
			it := outItem{data: m, trickle: r.Trickle}
			switch {
			case r.Partial:
				it = outItem{data: m[:len(m)/2], closeAfter: true, rst: f.RST}
			case r.Endless:
				it = outItem{data: strings.TrimSuffix(m, eol)[:len(m)/2], endless: true}
			}
			items = append(items, it)
			if r.Partial || r.Endless {
				break
			}
		}
		if !r.Partial && !r.Endless {
			for _, a := range after {
				items = append(items, outItem{data: a})
			}
		}
	}
	if r.Close && !r.Partial {
		items = append(items, outItem{closeAfter: true, rst: f.RST})
	}
	send := func() {
		targets := []*conn{c}
		if r.Broadcast {
			targets = s.liveConns()
		}
		for _, t := range targets {
			for _, it := range items {
				t.enqueue(it)
			}
		}
	}
	if r.Delay > 0 {
		s.connMu.Lock()
		s.timers = append(s.timers, time.AfterFunc(r.Delay, send))
		s.connMu.Unlock()
		return
	}
	send()
}

// javaStrip mirrors String.strip(): it trims Character.isWhitespace chars.
func javaStrip(s string) string { return strings.TrimFunc(s, javaWhitespace) }

// javaWhitespace mirrors Character.isWhitespace: Unicode space separators
// except the no-break ones, line/paragraph separators, and the ASCII
// controls TAB, LF, VT, FF, CR and FS, GS, RS, US.
func javaWhitespace(r rune) bool {
	switch r {
	case '\u00A0', '\u2007', '\u202F':
		return false
	case '\t', '\n', '\v', '\f', '\r', '\u001C', '\u001D', '\u001E', '\u001F':
		return true
	}
	return unicode.In(r, unicode.Zs, unicode.Zl, unicode.Zp)
}

// javaSplit mirrors String.split("\\s+"): split on runs of ASCII whitespace,
// a leading empty part kept, trailing empty parts removed.
func javaSplit(s string) []string {
	isWS := func(b byte) bool { return b == ' ' || b == '\t' || b == '\n' || b == '\v' || b == '\f' || b == '\r' }
	var parts []string
	start, matched := 0, false
	for i := 0; i < len(s); {
		if !isWS(s[i]) {
			i++
			continue
		}
		j := i
		for j < len(s) && isWS(s[j]) {
			j++
		}
		parts = append(parts, s[start:i])
		start, i, matched = j, j, true
	}
	parts = append(parts, s[start:])
	if !matched {
		return parts
	}
	for len(parts) > 0 && parts[len(parts)-1] == "" {
		parts = parts[:len(parts)-1]
	}
	return parts
}

// foldRune mirrors the char comparison of String.regionMatches(true, …).
func foldRune(a, b rune) bool {
	if a == b {
		return true
	}
	ua, ub := unicode.ToUpper(a), unicode.ToUpper(b)
	return ua == ub || unicode.ToLower(ua) == unicode.ToLower(ub)
}

// foldPrefix mirrors regionMatches(true, 0, prefix, 0, len): the first
// len(prefix) chars of s equal prefix ignoring case. prefix is ASCII.
func foldPrefix(s, prefix string) bool {
	rs := []rune(s)
	if len(rs) < len(prefix) {
		return false
	}
	for i := 0; i < len(prefix); i++ {
		if !foldRune(rs[i], rune(prefix[i])) {
			return false
		}
	}
	return true
}

// foldEqual mirrors equalsIgnoreCase against an ASCII word.
func foldEqual(s, word string) bool {
	return len([]rune(s)) == len(word) && foldPrefix(s, word)
}
