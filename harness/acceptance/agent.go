package acceptance

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/buildguard/buildguard/agentproto"
)

// queryTimeout bounds each DOCTOR or VERIFY, connect included.
const queryTimeout = 5 * time.Second

// doctorView is what the scenarios read from a DOCTOR result.
type doctorView struct {
	status    string
	buildHold string
	sessionID string
	pid       string
}

// receiptView is what the scenarios read from a VERIFY receipt; raw is the
// agent's JSON object as received.
type receiptView struct {
	status    string
	observed  string
	sessionID string
	raw       json.RawMessage
}

// agentClient asks the live agent for DOCTOR and VERIFY, one connection per
// query, as a user's tool would.
type agentClient struct {
	port int
}

// doctor sends DOCTOR and returns the validated result.
func (a agentClient) doctor(ctx context.Context) (doctorView, error) {
	ctx, cancel := context.WithTimeout(ctx, queryTimeout)
	defer cancel()
	conn, err := agentproto.Dial(ctx, a.port)
	if err != nil {
		return doctorView{}, fmt.Errorf("DOCTOR: %w", err)
	}
	defer conn.Close()
	d, err := conn.Doctor(ctx)
	if err != nil {
		return doctorView{}, fmt.Errorf("DOCTOR: %w", err)
	}
	return doctorView{status: d.Status, buildHold: d.BuildHold, sessionID: d.SessionID, pid: d.PID}, nil
}

// verify sends VERIFY class sha and returns the receipt.
func (a agentClient) verify(ctx context.Context, class, sha string) (receiptView, error) {
	ctx, cancel := context.WithTimeout(ctx, queryTimeout)
	defer cancel()
	conn, err := agentproto.Dial(ctx, a.port)
	if err != nil {
		return receiptView{}, fmt.Errorf("VERIFY %s: %w", class, err)
	}
	defer conn.Close()
	r, err := conn.Verify(ctx, class, sha)
	if err != nil {
		return receiptView{}, fmt.Errorf("VERIFY %s: %w", class, err)
	}
	raw, err := json.Marshal(r.Raw)
	if err != nil {
		return receiptView{}, fmt.Errorf("VERIFY %s: encoding the receipt: %w", class, err)
	}
	return receiptView{status: r.Status, observed: r.ObservedSHA256, sessionID: r.SessionID, raw: raw}, nil
}
