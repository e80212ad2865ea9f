package tools

import (
	"context"
	"encoding/json"
	"errors"

	"github.com/buildguard/buildguard/agentproto"
)

// The session tools (build, verify, verify_batch, doctor, reload_control)
// send correlated commands and wait for the exact reply.
func init() {
	handlers[Build] = handler{sessionTool: true, check: checkBuild, run: runBuild}
	handlers[Verify] = handler{sessionTool: true, check: checkVerify, run: runVerify}
	handlers[Doctor] = handler{sessionTool: true, check: noCheck, run: runDoctor}
	handlers[ReloadControl] = handler{sessionTool: true, check: checkReload, run: runReload}
	handlers[VerifyBatch] = handler{sessionTool: true, check: checkBatch, run: runBatch}
}

// sessionOpen connects with the session tools' bounds: timeoutMs for the
// connect and handshake, a fresh timeoutMs for the gate.
func (s *Service) sessionOpen(ctx context.Context, c *call) (*agentproto.Conn, error) {
	if owner, ok := c.str["owner"]; ok && c.name != Build && !agentproto.ValidToken(owner) {
		// An invalid owner passes argument validation but cannot open a
		// session, as in the contract (docs/mcp-server.md#7 item 3).
		return nil, errors.New("invalid owner: 1-64 ASCII letters, digits, _ or -")
	}
	_, conn, err := s.open(ctx, c, c.timeout)
	return conn, err
}

// step returns a context for one exchange of a session: a fresh timeoutMs.
func step(ctx context.Context, c *call) (context.Context, context.CancelFunc) {
	return context.WithTimeout(ctx, c.timeout)
}

func checkBuild(c *call) error {
	if !agentproto.ValidToken(c.str["owner"]) {
		return argError("reclazz_build requires owner: 1-64 ASCII letters, digits, _ or -")
	}
	switch c.str["state"] {
	case agentproto.BuildStarted, agentproto.BuildOK, agentproto.BuildFailed:
		return nil
	}
	return argError("reclazz_build requires state: started, ok or failed")
}

// runBuild signals one build state. It never launches a compiler.
func runBuild(ctx context.Context, s *Service, c *call) (Result, error) {
	state, owner := c.str["state"], c.str["owner"]
	conn, err := s.sessionOpen(ctx, c)
	var msg string
	if err != nil {
		msg = sessionMessage(err)
	} else {
		defer conn.Close()
		sctx, cancel := step(ctx, c)
		err = conn.Build(sctx, state, owner)
		cancel()
		if err != nil {
			msg = "BUILD " + state + " was not acknowledged; do not assume build/reload success"
		}
	}
	status, text := "acknowledged", "Acknowledged BUILD "+state+". This is not reload completion."
	if err != nil {
		status, text = "unavailable", "Build signal not confirmed: "+msg
	}
	return result(obj("status", status, "detail", text, "reloadConfirmed", false, "state", state, "owner", owner), err != nil, text)
}

func checkVerify(c *call) error {
	if !agentproto.ValidClassName(c.str["className"]) || !agentproto.ValidSHA256(c.str["sha256"]) {
		return argError("reclazz_verify requires className and a lower-case 64-digit sha256")
	}
	return nil
}

const notVerified = "Reload not verified: no valid correlated receipt"

// runVerify asks for the exact-byte receipt of one class. Only "applied" is
// success.
func runVerify(ctx context.Context, s *Service, c *call) (Result, error) {
	class, sha := c.str["className"], c.str["sha256"]
	conn, err := s.sessionOpen(ctx, c)
	if err != nil {
		return verifyUnavailable(class, sha, sessionMessage(err))
	}
	defer conn.Close()
	sctx, cancel := step(ctx, c)
	defer cancel()
	r, err := conn.Verify(sctx, class, sha)
	if err != nil {
		return verifyUnavailable(class, sha, notVerified+" ("+err.Error()+")")
	}
	return result(r.Raw, r.Status != agentproto.ReceiptApplied, "")
}

func verifyUnavailable(class, sha, detail string) (Result, error) {
	return result(unavailableReceipt(class, sha, detail), true, "")
}

func unavailableReceipt(class, sha, detail string) agentproto.Object {
	return obj("status", "unavailable", "className", class, "expectedSha256", sha, "detail", detail)
}

func checkReload(c *call) error {
	switch c.str["action"] {
	case agentproto.ReloadPause, agentproto.ReloadResume, agentproto.ReloadStatus:
		return nil
	}
	return argError("reclazz_reload_control requires action: pause, resume or status")
}

const (
	reloadNotConfirmed = "Reload control not confirmed; state may have changed. Query status before retrying."
	reloadSnapshot     = "Admission-state snapshot taken right after the action: acknowledgement is not completion, pending changes are kept, resume never releases BUILD holds, and the switch is agent-wide."
)

func runReload(ctx context.Context, s *Service, c *call) (Result, error) {
	action := c.str["action"]
	conn, err := s.sessionOpen(ctx, c)
	if err != nil {
		return result(obj("status", "unavailable", "detail", sessionMessage(err), "reloadConfirmed", false, "action", action), true, "")
	}
	defer conn.Close()
	sctx, cancel := step(ctx, c)
	defer cancel()
	st, err := conn.Reload(sctx, action)
	if err != nil {
		return result(obj("status", "unavailable", "detail", reloadNotConfirmed, "reloadConfirmed", false, "action", action), true, "")
	}
	return result(obj("status", "acknowledged", "detail", reloadSnapshot, "reloadConfirmed", false, "action", action,
		"paused", st.Paused, "pendingClasses", st.PendingClasses, "pendingActions", st.PendingActions, "buildHold", st.BuildHold), false, "")
}

// batchItem is one verify_batch pair.
type batchItem struct{ class, sha string }

const batchItemsError = "items must contain 1–32 unique className/lower-case sha256 pairs, with no extra fields"

func checkBatch(c *call) error {
	_, err := batchItems(c.args["items"])
	return err
}

func batchItems(raw json.RawMessage) ([]batchItem, error) {
	var list []map[string]json.RawMessage
	if len(raw) == 0 || raw[0] != '[' || json.Unmarshal(raw, &list) != nil || len(list) < 1 || len(list) > MaxBatchItems {
		return nil, argError(batchItemsError)
	}
	seen := map[string]bool{}
	items := make([]batchItem, 0, len(list))
	for _, m := range list {
		if m == nil || len(m) != 2 {
			return nil, argError(batchItemsError)
		}
		var it batchItem
		if json.Unmarshal(m["className"], &it.class) != nil || json.Unmarshal(m["sha256"], &it.sha) != nil ||
			!agentproto.ValidClassName(it.class) || !agentproto.ValidSHA256(it.sha) || seen[it.class] {
			return nil, argError(batchItemsError)
		}
		if m["className"][0] != '"' || m["sha256"][0] != '"' {
			return nil, argError(batchItemsError)
		}
		seen[it.class] = true
		items = append(items, it)
	}
	return items, nil
}

const (
	batchDetail = "Ordered point-in-time receipts from one connection; not atomic and no proof of application behaviour."
	batchFiller = "No validated receipt: connection, deadline, cancellation or session consistency failed; subsequent items were not queried."
)

// runBatch verifies up to 32 classes on one connection within one total
// deadline, in input order, stopping at the first failure.
func runBatch(ctx context.Context, s *Service, c *call) (Result, error) {
	items, _ := batchItems(c.args["items"])
	ctx, cancel := context.WithTimeout(ctx, c.timeout)
	defer cancel()
	results := make([]agentproto.Object, 0, len(items))
	session, applied := "", 0
	if ctx.Err() == nil {
		if conn, err := s.sessionOpen(ctx, c); err == nil {
			for _, it := range items {
				r, err := conn.Verify(ctx, it.class, it.sha)
				if err != nil || session != "" && r.SessionID != session {
					break
				}
				session = r.SessionID
				if r.Status == agentproto.ReceiptApplied {
					applied++
				}
				results = append(results, r.Raw)
			}
			conn.Close()
		}
	}
	status := "incomplete"
	switch {
	case len(results) < len(items):
		status = "unavailable"
		for _, it := range items[len(results):] {
			results = append(results, obj("className", it.class, "expectedSha256", it.sha, "status", "unavailable", "detail", batchFiller))
		}
	case applied == len(items):
		status = "applied"
	}
	all := status == "applied"
	return result(obj("status", status, "detail", batchDetail, "sessionId", session, "requestedCount", len(items),
		"allApplied", all, "atomic", false, "reloadConfirmed", false, "results", results), !all, "")
}
