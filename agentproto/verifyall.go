package agentproto

import (
	"context"
	"fmt"
	"strings"
)

// VerifyQuery is one class and the hash of its bytes, for [Conn.VerifyAll].
type VerifyQuery struct {
	Class, SHA256 string
}

// MaxVerifyInFlight bounds the VERIFY commands [Conn.VerifyAll] has sent and
// not seen answered: far below the agent's per-connection outbox of 1000
// lines (docs/agent-protocol.md#1.5), which carries broadcasts too, so that
// no reply is dropped for want of room.
const MaxVerifyInFlight = 64

// VerifyAll asks VERIFY for every query on the connection, each with a
// token of its own, keeping up to MaxVerifyInFlight of them in flight, and
// calls got with the query's index and its validated receipt as each
// answer arrives (in any order). All of it is bounded by ctx. It stops at
// the first failure and returns the index of the query the failure
// concerns (the oldest one unanswered when the connection or ctx failed)
// with the error Verify would have returned, or what got returned. A query
// that is not a valid class name and hash fails with ErrInvalidCommand
// before anything is sent. Answers to queries in flight when it stopped
// may still arrive; a later request on the connection skips them. When
// every query was answered, failed is -1 and err nil.
func (c *Conn) VerifyAll(ctx context.Context, queries []VerifyQuery, got func(i int, r *Receipt) error) (failed int, err error) {
	for i, q := range queries {
		if !ValidClassName(q.Class) || !ValidSHA256(q.SHA256) {
			return i, fmt.Errorf("%w: VERIFY needs a binary class name and a lower-case sha256", ErrInvalidCommand)
		}
	}
	stop := c.bind(ctx)
	defer stop()
	inFlight := make(map[string]int, min(len(queries), MaxVerifyInFlight))
	oldest := func() int {
		o := len(queries)
		for _, i := range inFlight {
			o = min(o, i)
		}
		return o
	}
	for next := 0; next < len(queries) || len(inFlight) > 0; {
		for ; next < len(queries) && len(inFlight) < MaxVerifyInFlight; next++ {
			tok := NewToken()
			if err := c.send(ctx, "VERIFY "+tok+" "+queries[next].Class+" "+queries[next].SHA256); err != nil {
				return min(next, oldest()), err
			}
			inFlight[tok] = next
		}
		failed = -1
		err := c.await(ctx, func(msg string) error {
			rest, ok := strings.CutPrefix(msg, "VERIFY_RESULT ")
			if !ok {
				return errSkip
			}
			tok, payload, _ := strings.Cut(rest, " ")
			i, ok := inFlight[tok]
			if !ok {
				return errSkip
			}
			failed = i
			r, err := parseReceipt(tok, queries[i].Class, queries[i].SHA256, payload)
			if err != nil {
				return err
			}
			delete(inFlight, tok)
			return got(i, r)
		})
		if err != nil {
			if failed < 0 {
				failed = oldest()
			}
			return failed, err
		}
	}
	return -1, nil
}
