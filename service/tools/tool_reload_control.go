package tools

import (
	"context"
	"errors"

	"github.com/buildguard/buildguard/agentproto"
)

// ToolReloadControl pauses, resumes or inspects automatic reload admission.
const ToolReloadControl = "reclazz_reload_control"

func reloadControlTool() *Tool {
	return &Tool{
		Name:        ToolReloadControl,
		description: "Pause, resume or inspect automatic reload admission. Pending changes are kept, resume never releases BUILD holds, an acknowledgement is not completion, and the switch is agent-wide.",
		inputSchema: func() agentproto.Object {
			return inputSchema(timeoutDescription(sessionTimeout), object(
				"action", object("type", "string", "maxLength", maxArgLength, "enum", []string{"pause", "resume", "status"}, "description", "pause, resume or status."),
			), "action")
		},
		outputSchema: reloadControlOutputSchema,
		annotations:  mutating(),
		timeout:      sessionTimeout,
		check:        checkReload,
		run:          runReload,
		CLI: CLIForm{Command: "reload", Usage: "pause|resume|status",
			Args: func(pos []string, _ map[string]string) (map[string]any, error) {
				if len(pos) != 1 {
					return nil, errors.New("reload takes one action: pause, resume or status")
				}
				return map[string]any{"action": pos[0]}, nil
			}},
	}
}

func checkReload(c *toolCall) error {
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

func runReload(ctx context.Context, c *toolCall) (Result, error) {
	action := c.str["action"]
	conn, err := c.sessionOpen(ctx)
	if err != nil {
		return result(object("status", "unavailable", "detail", c.sessionMessage(err), "reloadConfirmed", false, "action", action), true, "")
	}
	defer conn.Close()
	sctx, cancel := c.step(ctx)
	defer cancel()
	st, err := conn.Reload(sctx, action)
	if err != nil {
		return result(object("status", "unavailable", "detail", reloadNotConfirmed, "reloadConfirmed", false, "action", action), true, "")
	}
	return result(object("status", "acknowledged", "detail", reloadSnapshot, "reloadConfirmed", false, "action", action,
		"paused", st.Paused, "pendingClasses", st.PendingClasses, "pendingActions", st.PendingActions, "buildHold", st.BuildHold), false, "")
}

const reloadControlOutputSchema = `{
  "type": "object",
  "properties": {
    "status": {"type": "string", "enum": ["acknowledged", "unavailable"]},
    "action": {"type": "string", "enum": ["pause", "resume", "status"]},
    "detail": {"type": "string"},
    "reloadConfirmed": {"const": false},
    "paused": {"type": "boolean"},
    "pendingClasses": {"type": "integer", "minimum": 0},
    "pendingActions": {"type": "integer", "minimum": 0},
    "buildHold": {"type": "string", "enum": ["none", "named", "legacy"]}
  },
  "required": ["status", "action", "detail", "reloadConfirmed"],
  "additionalProperties": false,
  "allOf": [
    {
      "if": {"properties": {"status": {"const": "acknowledged"}}, "required": ["status"]},
      "then": {"required": ["paused", "pendingClasses", "pendingActions", "buildHold"]}
    }
  ]
}`
