package tools

import (
	"context"
	"strings"

	"github.com/buildguard/buildguard/agentproto"
)

// The simple tools send one uncorrelated command (HEALTH, SCAN, PENDING,
// DIAGNOSE) on a connection that lives for the call.
func init() {
	handlers[Status] = handler{check: noCheck, run: runStatus}
	handlers[Scan] = handler{check: noCheck, run: runScan}
	handlers[Pending] = handler{check: noCheck, run: func(ctx context.Context, s *Service, c *call) (Result, error) {
		return runQuery(ctx, s, c, "PENDING", "Pending query failed: ", nil)
	}}
	handlers[Diagnose] = handler{
		check: func(c *call) error {
			if !agentproto.ValidClassName(c.str["className"]) {
				return argError("reclazz_diagnose requires a valid binary className of at most 256 characters")
			}
			return nil
		},
		run: func(ctx context.Context, s *Service, c *call) (Result, error) {
			class := c.str["className"]
			return runQuery(ctx, s, c, "DIAGNOSE "+class, "Diagnosis query failed: ", &class)
		},
	}
}

func noCheck(*call) error { return nil }

// simpleOpen connects with the simple tools' connect bound and one deadline
// of timeoutMs for the whole call.
func (s *Service) simpleOpen(ctx context.Context, c *call) (context.Context, context.CancelFunc, int, *agentproto.Conn, error) {
	ctx, cancel := context.WithTimeout(ctx, c.timeout)
	port, conn, err := s.open(ctx, c, min(c.timeout, SimpleConnectTimeout))
	if err != nil {
		cancel()
		return nil, nil, port, nil, err
	}
	return ctx, func() { conn.Close(); cancel() }, port, conn, nil
}

// runStatus reports attachment and health. It is never a tool error: not
// being attached is an answer, not a failure.
func runStatus(ctx context.Context, s *Service, c *call) (Result, error) {
	ctx, done, port, conn, err := s.simpleOpen(ctx, c)
	if err != nil {
		data := obj("attached", false, "reason", err.Error())
		if port != 0 {
			data = append(data, obj("port", port)...)
		}
		return result(data, false, "")
	}
	defer done()
	health, err := conn.Query(ctx, "HEALTH")
	if health == nil {
		health = []string{}
	}
	data := obj("attached", true)
	if err != nil {
		data = append(data, obj("reason", err.Error())...)
	}
	data = append(data, obj("agent", conn.Agent(), "protocol", agentproto.ProtocolVersion, "port", port, "health", health)...)
	return result(data, false, "")
}

const scanSent = "Sent SCAN to the agent. Acceptance and reload completion are not confirmed."

func runScan(ctx context.Context, s *Service, c *call) (Result, error) {
	ctx, done, _, conn, err := s.simpleOpen(ctx, c)
	if err == nil {
		defer done()
		err = conn.Scan(ctx)
	}
	if err != nil {
		text := "Scan request failed: " + err.Error()
		return result(obj("status", "unavailable", "detail", text, "reloadConfirmed", false), true, text)
	}
	return result(obj("status", "sent", "detail", scanSent, "reloadConfirmed", false), false, scanSent)
}

// runQuery runs a broadcast query. Silence is never reported as "nothing
// pending": no INFO line is a failure.
func runQuery(ctx context.Context, s *Service, c *call, command, failPrefix string, class *string) (Result, error) {
	var lines []string
	qctx, done, _, conn, err := s.simpleOpen(ctx, c)
	if err == nil {
		defer done()
		lines, err = conn.Query(qctx, command)
	}
	if lines == nil {
		lines = []string{}
	}
	status, text := "observed", strings.Join(lines, "\n")
	if err != nil {
		status, text = "unavailable", failPrefix+err.Error()
	}
	data := obj("status", status)
	if class != nil {
		data = append(data, obj("className", *class)...)
	}
	data = append(data, obj("lines", lines, "detail", text, "complete", false)...)
	return result(data, err != nil, text)
}
