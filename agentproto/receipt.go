package agentproto

import (
	"errors"
	"fmt"
)

// The receipt statuses of the agent (docs/agent-protocol.md#8). Only
// ReceiptApplied proves that the exact bytes were reloaded.
const (
	ReceiptApplied     = "applied"
	ReceiptRunning     = "running"
	ReceiptFailed      = "failed"
	ReceiptUnverified  = "unverified"
	ReceiptMismatch    = "mismatch"
	ReceiptNotObserved = "not_observed"
)

// Receipt is a validated VERIFY answer: the agent's record of the latest
// reload attempt of one class, compared with the expected bytes.
type Receipt struct {
	RequestID      string
	SessionID      string
	ClassName      string
	ExpectedSHA256 string
	ObservedSHA256 string
	Status         string
	Source         string
	Detail         string
	CompletedAt    string
	// Raw is the agent's receipt object as received (extra fields included).
	Raw Object
}

func parseReceipt(token, class, sha256, payload string) (*Receipt, error) {
	r, err := decodeReceipt(token, class, sha256, payload)
	if err != nil {
		return nil, &wireError{msg: ErrInvalidResponse.Error(), errs: []error{ErrInvalidResponse, fmt.Errorf("VERIFY_RESULT: %w", err)}}
	}
	return r, nil
}

func decodeReceipt(token, class, sha256, payload string) (*Receipt, error) {
	obj, err := ParseObject([]byte(payload))
	if err != nil {
		return nil, err
	}
	r := &Receipt{Raw: obj}
	for _, f := range []struct {
		key string
		dst *string
	}{
		{"requestId", &r.RequestID}, {"sessionId", &r.SessionID}, {"className", &r.ClassName},
		{"expectedSha256", &r.ExpectedSHA256}, {"observedSha256", &r.ObservedSHA256}, {"status", &r.Status},
		{"source", &r.Source}, {"detail", &r.Detail}, {"completedAt", &r.CompletedAt},
	} {
		s, ok := obj.String(f.key)
		if !ok {
			return nil, fmt.Errorf("%q is not a string", f.key)
		}
		*f.dst = s
	}
	switch {
	case r.RequestID != token:
		return nil, errors.New("uncorrelated requestId")
	case r.ClassName != class:
		return nil, errors.New("className does not echo the request")
	case r.ExpectedSHA256 != sha256:
		return nil, errors.New("expectedSha256 does not echo the request")
	case IsBlank(r.SessionID):
		return nil, errors.New("blank sessionId")
	case !oneOf(r.Status, ReceiptApplied, ReceiptRunning, ReceiptFailed, ReceiptUnverified, ReceiptMismatch, ReceiptNotObserved):
		return nil, fmt.Errorf("unknown status %q", r.Status)
	case r.Status == ReceiptApplied && (r.ObservedSHA256 != sha256 || IsBlank(r.CompletedAt)):
		return nil, errors.New("applied without the expected observedSha256 and a completedAt")
	}
	return r, nil
}
