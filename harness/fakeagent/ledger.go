package fakeagent

import (
	"crypto/sha256"
	"encoding/hex"
	"strings"

	"github.com/buildguard/buildguard/agentproto"
)

// Receipt statuses of VERIFY (docs/agent-protocol.md#8).
const (
	StatusApplied     = "applied"
	StatusRunning     = "running"
	StatusFailed      = "failed"
	StatusUnverified  = "unverified"
	StatusMismatch    = "mismatch"
	StatusNotObserved = "not_observed"
)

// Receipt details the agent uses.
const (
	detailRunning     = "Reload batch has not completed"
	detailApplied     = "Reload applied; the JVM accepted the new bytes"
	detailNotObserved = "No retained reload receipt in this agent session"
	detailMismatch    = "The latest attempted bytes differ from the requested bytes"
	maxReceiptField   = 200
)

// Receipt is the latest reload attempt retained for one class (docs/agent-protocol.md#8).
type Receipt struct {
	// SHA256 is the lower-case hex hash of the captured bytes.
	SHA256 string
	// Source is the path the bytes came from (cut to 200 chars in replies).
	Source string
	// Status is applied, running, failed or unverified.
	Status string
	// Detail is the reason or outcome (cut to 200 chars in replies).
	Detail string
	// CompletedAt is the batch completion instant ("" while running).
	CompletedAt string
}

// BatchEntry is one class of a reload batch. SHA256 is computed from Bytes
// when empty.
type BatchEntry struct {
	Class, Source, SHA256 string
	Bytes                 []byte
}

// ledgerEntry is a retained receipt with its batch.
type ledgerEntry struct {
	class   string
	receipt Receipt
	batch   uint64
}

// ledger is the latest-only receipt ledger, oldest inserted first.
type ledger struct {
	entries   []ledgerEntry
	lastBatch uint64
}

func (l *ledger) find(class string) int {
	for i, e := range l.entries {
		if e.class == class {
			return i
		}
	}
	return -1
}

// put replaces the class's receipt (as the newest entry) and evicts the oldest
// beyond MaxReceipts.
func (l *ledger) put(class string, r Receipt, batch uint64) {
	if i := l.find(class); i >= 0 {
		l.entries = append(l.entries[:i], l.entries[i+1:]...)
	}
	l.entries = append(l.entries, ledgerEntry{class: class, receipt: r, batch: batch})
	if over := len(l.entries) - MaxReceipts; over > 0 {
		l.entries = append([]ledgerEntry(nil), l.entries[over:]...)
	}
}

func (l *ledger) remove(class string) bool {
	if i := l.find(class); i >= 0 {
		l.entries = append(l.entries[:i], l.entries[i+1:]...)
		return true
	}
	return false
}

// SetReceipt stores r as the latest receipt of class (outside any batch).
func (s *Server) SetReceipt(class string, r Receipt) {
	s.mu.Lock()
	s.ledger.put(class, r, 0)
	s.mu.Unlock()
}

// Receipt returns the retained receipt of class.
func (s *Server) Receipt(class string) (Receipt, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if i := s.ledger.find(class); i >= 0 {
		return s.ledger.entries[i].receipt, true
	}
	return Receipt{}, false
}

// Receipts returns the retained class names, oldest inserted first.
func (s *Server) Receipts() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]string, len(s.ledger.entries))
	for i, e := range s.ledger.entries {
		out[i] = e.class
	}
	return out
}

// Evict removes the receipt of class (as an eviction or a reload outcome
// outside a tracked batch would); VERIFY then answers not_observed.
func (s *Server) Evict(class string) {
	s.mu.Lock()
	s.ledger.remove(class)
	s.mu.Unlock()
}

// Batch is a reload batch started with [Server.StartBatch].
type Batch struct {
	s  *Server
	id uint64
}

// StartBatch starts a reload batch: for each entry, receipts from the same
// source path are dropped and a `running` receipt ("Reload batch has not
// completed") becomes the class's latest.
func (s *Server) StartBatch(entries ...BatchEntry) *Batch {
	s.mu.Lock()
	defer s.mu.Unlock()
	return &Batch{s: s, id: s.startBatchLocked(entries)}
}

func (s *Server) startBatchLocked(entries []BatchEntry) uint64 {
	s.ledger.lastBatch++
	id := s.ledger.lastBatch
	for _, e := range entries {
		sum := e.SHA256
		if sum == "" {
			h := sha256.Sum256(e.Bytes)
			sum = hex.EncodeToString(h[:])
		}
		if e.Source != "" {
			for i := 0; i < len(s.ledger.entries); {
				if s.ledger.entries[i].receipt.Source == e.Source {
					s.ledger.entries = append(s.ledger.entries[:i], s.ledger.entries[i+1:]...)
					continue
				}
				i++
			}
		}
		s.ledger.put(e.Class, Receipt{SHA256: sum, Source: e.Source, Status: StatusRunning, Detail: detailRunning}, id)
	}
	return id
}

// Finish completes every class of the batch still owned by it with status
// (applied, failed or unverified) and detail; a receipt superseded or evicted
// meanwhile is not resurrected.
func (b *Batch) Finish(status, detail string) {
	b.s.mu.Lock()
	b.s.finishBatchLocked(b.id, "", status, detail)
	b.s.mu.Unlock()
}

// FinishClass completes one class of the batch.
func (b *Batch) FinishClass(class, status, detail string) {
	b.s.mu.Lock()
	b.s.finishBatchLocked(b.id, class, status, detail)
	b.s.mu.Unlock()
}

func (s *Server) finishBatchLocked(id uint64, class, status, detail string) {
	at := Timestamp(now())
	for i := range s.ledger.entries {
		e := &s.ledger.entries[i]
		if e.batch != id || (class != "" && e.class != class) || e.receipt.Status != StatusRunning {
			continue
		}
		e.receipt.Status, e.receipt.Detail, e.receipt.CompletedAt = status, detail, at
	}
}

// verifyJSONLocked resolves a VERIFY query (docs/agent-protocol.md#8) into its nine-field JSON.
func (s *Server) verifyJSONLocked(token, class, sha string) string {
	observed, status, source, detail, completed := "", StatusNotObserved, "", detailNotObserved, ""
	if i := s.ledger.find(class); i >= 0 {
		r := s.ledger.entries[i].receipt
		observed, source, completed = r.SHA256, r.Source, r.CompletedAt
		if r.SHA256 != sha {
			status, detail = StatusMismatch, detailMismatch
		} else {
			status, detail = r.Status, r.Detail
		}
	}
	// The agent cuts source and detail by Java chars.
	source, _ = agentproto.CutUTF16(source, maxReceiptField)
	detail, _ = agentproto.CutUTF16(detail, maxReceiptField)
	fields := [][2]string{
		{"requestId", token}, {"sessionId", s.session}, {"className", class}, {"expectedSha256", sha},
		{"observedSha256", observed}, {"status", status}, {"source", source},
		{"detail", detail}, {"completedAt", completed},
	}
	var b strings.Builder
	b.WriteByte('{')
	for i, f := range fields {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(`"` + f[0] + `":"` + Escape(f[1]) + `"`)
	}
	b.WriteByte('}')
	return b.String()
}
