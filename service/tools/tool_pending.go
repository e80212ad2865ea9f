package tools

import (
	"context"
	"strings"

	"github.com/buildguard/buildguard/agentproto"
)

// ToolPending lists the changes that need an application restart.
const ToolPending = "reclazz_pending"

func pendingTool() *Tool {
	return &Tool{
		Name:         ToolPending,
		description:  "List the changes the agent could not hot-reload and that need an application restart. Silence is never reported as nothing pending.",
		inputSchema:  func() agentproto.Object { return inputSchema(timeoutDescription(simpleTimeout), nil) },
		outputSchema: pendingOutputSchema,
		annotations:  readOnly(),
		timeout:      simpleTimeout,
		run: func(ctx context.Context, c *toolCall) (Result, error) {
			return runQuery(ctx, c, "PENDING", "Pending query failed: ", nil)
		},
		CLI: CLIForm{Command: "pending", Args: noPositional},
	}
}

// runQuery runs a broadcast query (PENDING, DIAGNOSE) on a connection that
// lives for the call. Silence is never reported as "nothing pending": no
// INFO line is a failure.
func runQuery(ctx context.Context, c *toolCall, command, failPrefix string, class *string) (Result, error) {
	var lines []string
	qctx, done, _, conn, err := c.simpleOpen(ctx)
	if err == nil {
		defer done()
		lines, err = conn.Query(qctx, command)
	}
	if lines == nil {
		lines = []string{}
	}
	status, text := "observed", strings.Join(lines, "\n")
	if err != nil {
		status, text = "unavailable", failPrefix+c.words(err)
	}
	data := object("status", status)
	if class != nil {
		data = append(data, object("className", *class)...)
	}
	data = append(data, object("lines", lines, "detail", text, "complete", false)...)
	return result(data, err != nil, text)
}

const pendingOutputSchema = `{
  "$schema": "https://json-schema.org/draft/2020-12/schema",
  "type": "object",
  "properties": {
    "status": {"type": "string", "enum": ["observed", "unavailable"]},
    "lines": {"type": "array", "items": {"type": "string"}},
    "detail": {"type": "string"},
    "complete": {"type": "boolean", "const": false}
  },
  "required": ["status", "lines", "detail", "complete"]
}`
