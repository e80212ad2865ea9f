package tools

import (
	"context"

	"github.com/buildguard/buildguard/agentproto"
)

// ToolScan asks the agent for an immediate scan of its watched output.
const ToolScan = "reclazz_scan"

func scanTool() *Tool {
	return &Tool{
		Name:         ToolScan,
		description:  "Ask the agent for an immediate scan of its watched output. Dispatch only: it confirms neither acceptance nor reload completion, and it cannot release a failed build.",
		inputSchema:  func() agentproto.Object { return inputSchema(timeoutDescription(simpleTimeout), nil) },
		outputSchema: scanOutputSchema,
		annotations:  mutating(),
		timeout:      simpleTimeout,
		run:          runScan,
		CLI:          CLIForm{Command: "scan", Args: noPositional},
	}
}

const scanSent = "Sent SCAN to the agent. Acceptance and reload completion are not confirmed."

func runScan(ctx context.Context, c *toolCall) (Result, error) {
	ctx, done, _, conn, err := c.simpleOpen(ctx)
	if err == nil {
		defer done()
		err = conn.Scan(ctx)
	}
	if err != nil {
		text := "Scan request failed: " + c.words(err)
		return result(object("status", "unavailable", "detail", text, "reloadConfirmed", false), true, text)
	}
	return result(object("status", "sent", "detail", scanSent, "reloadConfirmed", false), false, scanSent)
}

const scanOutputSchema = `{
  "$schema": "https://json-schema.org/draft/2020-12/schema",
  "type": "object",
  "properties": {
    "status": {"type": "string", "enum": ["sent", "unavailable"]},
    "detail": {"type": "string"},
    "reloadConfirmed": {"type": "boolean", "const": false}
  },
  "required": ["status", "detail", "reloadConfirmed"]
}`
