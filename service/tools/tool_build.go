package tools

import (
	"context"
	"errors"

	"github.com/buildguard/buildguard/agentproto"
)

// ToolBuild signals one build state (started, ok, failed) to the agent.
const ToolBuild = "reclazz_build"

func buildTool() *Tool {
	return &Tool{
		Name:        ToolBuild,
		description: "Signal the compile state to the agent. Send started and wait for its acknowledgement before compiling; send ok only after the compiler exited 0, failed otherwise. Use one unique owner token for started, ok and failed and keep it: only that owner's successful build releases a held output, and SCAN cannot. An acknowledgement is not reload completion.",
		inputSchema: func() agentproto.Object {
			return inputSchema(timeoutDescription(sessionTimeout), object(
				"state", object("type", "string", "enum", []string{"started", "ok", "failed"}, "description", "started before compiling; ok after exit 0; failed otherwise."),
				"owner", object("type", "string", "maxLength", 64, "pattern", ownerPattern, "description", "Owner token of this build, 1-64 ASCII letters, digits, _ or -. Keep it for recovery."),
			), "state", "owner")
		},
		outputSchema: buildOutputSchema,
		annotations:  mutating(),
		timeout:      sessionTimeout,
		check:        checkBuild,
		run:          runBuild,
		CLI: CLIForm{Command: "build", Usage: "started|ok|failed --owner TOKEN",
			Flags: map[string]string{"--owner": "owner"},
			Args: func(pos []string, own map[string]string) (map[string]any, error) {
				if len(pos) != 1 {
					return nil, errors.New("build takes one state: started, ok or failed")
				}
				if _, ok := own["owner"]; !ok {
					return nil, errors.New("build needs --owner TOKEN (the same token for started, ok and failed)")
				}
				return map[string]any{"state": pos[0], "owner": own["owner"]}, nil
			}},
	}
}

func checkBuild(c *toolCall) error {
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
func runBuild(ctx context.Context, c *toolCall) (Result, error) {
	state, owner := c.str["state"], c.str["owner"]
	conn, err := c.sessionOpen(ctx)
	var msg string
	if err != nil {
		msg = c.sessionMessage(err)
	} else {
		defer conn.Close()
		sctx, cancel := c.step(ctx)
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
	return result(object("status", status, "detail", text, "reloadConfirmed", false, "state", state, "owner", owner), err != nil, text)
}

const buildOutputSchema = `{
  "$schema": "https://json-schema.org/draft/2020-12/schema",
  "type": "object",
  "properties": {
    "status": {"type": "string", "enum": ["acknowledged", "unavailable"]},
    "state": {"type": "string", "enum": ["started", "ok", "failed"]},
    "detail": {"type": "string"},
    "reloadConfirmed": {"type": "boolean", "const": false},
    "owner": {"type": "string", "pattern": "^[A-Za-z0-9_-]{1,64}$"}
  },
  "required": ["status", "state", "detail", "reloadConfirmed", "owner"]
}`
