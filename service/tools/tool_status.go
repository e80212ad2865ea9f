package tools

import (
	"context"

	"github.com/buildguard/buildguard/agentproto"
)

// ToolStatus reports whether the agent is attached and its health.
const ToolStatus = "reclazz_status"

func statusTool() *Tool {
	return &Tool{
		Name:         ToolStatus,
		description:  "Report whether the Reclazz agent is attached and its health, as JSON. Never a tool error: an unreachable agent is attached:false with a reason.",
		inputSchema:  func() agentproto.Object { return inputSchema(timeoutDescription(simpleTimeout), nil) },
		outputSchema: statusOutputSchema,
		annotations:  readOnly(),
		timeout:      simpleTimeout,
		run:          runStatus,
		CLI:          CLIForm{Command: "status", Args: noPositional},
	}
}

// runStatus reports attachment and health. It is never a tool error: not
// being attached is an answer, not a failure.
func runStatus(ctx context.Context, c *toolCall) (Result, error) {
	ctx, done, port, conn, err := c.simpleOpen(ctx)
	if err != nil {
		data := object("attached", false, "reason", c.words(err))
		if port != 0 {
			data = append(data, object("port", port)...)
		}
		return result(data, false, "")
	}
	defer done()
	health, err := conn.Query(ctx, "HEALTH")
	if health == nil {
		health = []string{}
	}
	data := object("attached", true)
	if err != nil {
		data = append(data, object("reason", c.words(err))...)
	}
	data = append(data, object("agent", conn.Agent(), "protocol", agentproto.ProtocolVersion, "port", port, "health", health)...)
	return result(data, false, "")
}

const statusOutputSchema = `{
  "$schema": "https://json-schema.org/draft/2020-12/schema",
  "type": "object",
  "properties": {
    "attached": {"type": "boolean"},
    "agent": {"type": "string"},
    "protocol": {"type": "integer", "const": 1},
    "port": {"type": "integer"},
    "health": {"type": "array", "items": {"type": "string"}},
    "reason": {"type": "string"}
  },
  "required": ["attached"],
  "anyOf": [
    {"properties": {"attached": {"const": true}}, "required": ["agent", "protocol", "port", "health"]},
    {"properties": {"attached": {"const": false}}, "required": ["reason"]}
  ]
}`
