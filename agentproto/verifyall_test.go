package agentproto

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"
)

// verifyReply is the VERIFY_RESULT line answering cmd ("VERIFY tok class
// sha") with status, or with a receipt for another class when wrongEcho.
func verifyReply(cmd, status string, wrongEcho bool) string {
	f := strings.Fields(cmd)
	class := f[2]
	if wrongEcho {
		class = "com.acme.Other"
	}
	return info(fmt.Sprintf(`VERIFY_RESULT %s {"requestId":%q,"sessionId":"s-1","className":%q,"expectedSha256":%q,"observedSha256":"","status":%q,"source":"","detail":"d","completedAt":""}`,
		f[1], f[1], class, f[3], status))
}

// VerifyAll keeps several VERIFY in flight on the one connection and
// matches each answer to its query by token, in whatever order they come:
// the scripted agent answers only once it holds three commands, in reverse
// order, which a client asking one at a time would wait for in vain.
func TestVerifyAllKeepsRequestsInFlight(t *testing.T) {
	t.Parallel()
	queries := []VerifyQuery{{"com.acme.A", sha}, {"com.acme.B", sha}, {"com.acme.C", sha}}
	port := serve(t, func(p *peer) {
		p.line(connected)
		var cmds []string
		for range queries {
			cmds = append(cmds, p.command())
		}
		slices.Reverse(cmds)
		for _, c := range cmds {
			if c == "" {
				return
			}
			p.line(info("Build started; a broadcast between the answers"))
			p.line(verifyReply(c, "not_observed", false))
		}
	})
	got := map[int]string{}
	failed, err := dial(t, port).VerifyAll(ctxFor(t, 5*time.Second), queries, func(i int, r *Receipt) error {
		got[i] = r.ClassName
		return nil
	})
	if err != nil || failed != -1 {
		t.Fatalf("VerifyAll = %d, %v", failed, err)
	}
	for i, q := range queries {
		if got[i] != q.Class {
			t.Errorf("query %d got the receipt of %q, want %q", i, got[i], q.Class)
		}
	}
}

// VerifyAll stops at the first failure and names the query it concerns: an
// invalid receipt, what got returned, or the deadline (the oldest query
// still unanswered).
func TestVerifyAllStopsAtTheFirstFailure(t *testing.T) {
	t.Parallel()
	queries := []VerifyQuery{{"com.acme.A", sha}, {"com.acme.B", sha}, {"com.acme.C", sha}}
	stopped := errors.New("stopped by got")
	for name, tc := range map[string]struct {
		answer     func(i int, cmd string) string // "" answers nothing
		got        func(i int) error
		wantFailed int
		wantErr    error
	}{
		"invalid receipt": {func(i int, cmd string) string { return verifyReply(cmd, "running", i == 1) }, func(int) error { return nil }, 1, ErrInvalidResponse},
		"got stops":       {func(_ int, cmd string) string { return verifyReply(cmd, "running", false) }, func(i int) error { return map[bool]error{true: stopped}[i == 2] }, 2, stopped},
		"no answer": {func(i int, cmd string) string {
			return map[bool]string{true: verifyReply(cmd, "running", false)}[i == 0]
		}, func(int) error { return nil }, 1, ErrTimeout},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			port := serve(t, func(p *peer) {
				p.line(connected)
				for i := range queries {
					c := p.command()
					if c == "" {
						return
					}
					if a := tc.answer(i, c); a != "" {
						p.line(a)
					}
				}
				p.command() // hold the connection until the client is done
			})
			failed, err := dial(t, port).VerifyAll(ctxFor(t, time.Second), queries, func(i int, _ *Receipt) error { return tc.got(i) })
			if failed != tc.wantFailed || !errors.Is(err, tc.wantErr) {
				t.Errorf("VerifyAll = %d, %v; want %d, %v", failed, err, tc.wantFailed, tc.wantErr)
			}
		})
	}
}
