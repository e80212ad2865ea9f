package tools

import (
	"context"
	"fmt"

	"github.com/buildguard/buildguard/agentproto"
)

// ToolDoctor reads the agent's correlated DOCTOR evidence.
const ToolDoctor = "reclazz_doctor"

func doctorTool() *Tool {
	return &Tool{
		Name:         ToolDoctor,
		description:  "Read correlated JVM, session, watch and capability evidence from the agent. Compare pid, workingDirectory and sessionId with the application you mean before acting; the evidence does not prove coverage, the project root or any reload.",
		inputSchema:  func() agentproto.Object { return inputSchema(timeoutDescription(sessionTimeout), nil) },
		outputSchema: doctorOutputSchema,
		annotations:  readOnly(),
		timeout:      sessionTimeout,
		run:          runDoctor,
		CLI:          CLIForm{Command: "doctor", Args: noPositional},
	}
}

const (
	doctorFailed      = "Doctor evidence unavailable; check the endpoint and matching agent version."
	nextCheckEndpoint = "Check the port or port file and install matching agent and buildguard builds; capability support is unknown."
	nextCompare       = "Compare the target PID, workingDirectory and sessionId with the application you mean to change before acting."
	nextVerify        = "Use exact-byte VERIFY and application checks: this observation proves no reload."
)

// runDoctor reads the agent's evidence and adds what the caller should do
// with it. It never claims a reload.
func runDoctor(ctx context.Context, c *toolCall) (Result, error) {
	fail := func() (Result, error) {
		return result(object("status", "unavailable", "detail", doctorFailed, "reloadConfirmed", false,
			"clientWorkingDirectory", c.deps.ClientWorkingDirectory, "nextActions", []string{nextCheckEndpoint}), true, "")
	}
	conn, err := c.sessionOpen(ctx)
	if err != nil {
		return fail()
	}
	defer conn.Close()
	sctx, cancel := c.step(ctx)
	defer cancel()
	d, err := conn.Doctor(sctx)
	if err != nil {
		return fail()
	}
	data := c.passThrough.filter(ToolDoctor, d.Raw)
	actions := []string{nextCheckEndpoint}
	if d.Status == agentproto.DoctorObserved {
		actions = nextActions(d)
	}
	for _, m := range object("clientWorkingDirectory", c.deps.ClientWorkingDirectory, "reloadConfirmed", false, "nextActions", actions) {
		data = data.Set(m.Key, m.Value)
	}
	return result(data, d.Status != agentproto.DoctorObserved, "")
}

// nextActions derives the advice for observed evidence (docs/mcp-server.md#4.8).
func nextActions(d *agentproto.Doctor) []string {
	a := []string{nextCompare}
	if d.WatcherState != "watching" {
		a = append(a, fmt.Sprintf("Wait for the watcher startup to finish (watcherState is %s), then ask DOCTOR again.", d.WatcherState))
	}
	if d.WatchedDirectoryCount == 0 || d.UnwatchableDirectoryCount > 0 {
		a = append(a, fmt.Sprintf("Check the output directories and refused watches: %d watched, %d could not be watched.", d.WatchedDirectoryCount, d.UnwatchableDirectoryCount))
	}
	if d.WatchSampleTruncated {
		a = append(a, "The watched-directory sample is incomplete; it does not prove that your output directories are covered.")
	}
	if !d.BuildOwnershipSupported || !d.VerifySupported {
		a = append(a, "Wait for agent initialization to finish, or install a matching agent: build ownership or VERIFY is not supported yet.")
	}
	if d.BuildHold != "none" {
		a = append(a, fmt.Sprintf("A build hold (%s) is active: let its original owner finish with the same owner token; never force it.", d.BuildHold))
	}
	return append(a, nextVerify)
}

// doctorOutputSchema allows extra properties: observed evidence is the
// agent's object as received, its own extra fields passed through
// (passthrough.go), with clientWorkingDirectory, reloadConfirmed and
// nextActions set by buildguard.
const doctorOutputSchema = `{
  "$schema": "https://json-schema.org/draft/2020-12/schema",
  "type": "object",
  "properties": {
    "requestId": {"type": "string", "maxLength": 512},
    "status": {"type": "string", "enum": ["observed", "unavailable"]},
    "detail": {"type": "string", "maxLength": 512},
    "clientWorkingDirectory": {"type": "string"},
    "nextActions": {"type": "array", "items": {"type": "string"}},
    "reloadConfirmed": {"type": "boolean", "const": false},
    "sessionId": {"type": "string", "maxLength": 512},
    "agentVersion": {"type": "string", "maxLength": 512},
    "pid": {"type": "string", "maxLength": 512},
    "javaVersion": {"type": "string", "maxLength": 512},
    "vmName": {"type": "string", "maxLength": 512},
    "workingDirectory": {"type": "string", "maxLength": 512},
    "watcherState": {"type": "string", "enum": ["starting", "watching", "stopped", "unavailable"]},
    "buildHold": {"type": "string", "enum": ["none", "named", "legacy", "unavailable"]},
    "watchedDirectories": {"type": "array", "maxItems": 8, "items": {"type": "string", "minLength": 1, "maxLength": 256}},
    "watchedDirectoryCount": {"type": "integer", "minimum": 0},
    "unwatchableDirectoryCount": {"type": "integer", "minimum": 0},
    "watchSampleTruncated": {"type": "boolean"},
    "buildOwnershipSupported": {"type": "boolean"},
    "verifySupported": {"type": "boolean"},
    "scanSupported": {"type": "boolean"}
  },
  "required": ["status", "detail", "clientWorkingDirectory", "nextActions", "reloadConfirmed"],
  "allOf": [
    {
      "if": {"properties": {"status": {"const": "observed"}}, "required": ["status"]},
      "then": {"required": ["requestId", "status", "detail", "clientWorkingDirectory", "nextActions", "reloadConfirmed", "sessionId", "agentVersion", "pid", "javaVersion", "vmName", "workingDirectory", "watcherState", "buildHold", "watchedDirectories", "watchedDirectoryCount", "unwatchableDirectoryCount", "watchSampleTruncated", "buildOwnershipSupported", "verifySupported", "scanSupported"]}
    }
  ]
}`
