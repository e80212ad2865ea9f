package tools

import (
	"context"
	"fmt"

	"github.com/buildguard/buildguard/agentproto"
)

const (
	doctorFailed      = "Doctor evidence unavailable; check the endpoint and matching agent version."
	nextCheckEndpoint = "Check the port or port file and install matching agent and buildguard builds; capability support is unknown."
	nextCompare       = "Compare the target PID, workingDirectory and sessionId with the application you mean to change before acting."
	nextVerify        = "Use exact-byte VERIFY and application checks: this observation proves no reload."
)

// runDoctor reads the agent's evidence and adds what the caller should do
// with it. It never claims a reload.
func runDoctor(ctx context.Context, s *Service, c *call) (Result, error) {
	fail := func() (Result, error) {
		return result(obj("status", "unavailable", "detail", doctorFailed, "reloadConfirmed", false,
			"clientWorkingDirectory", s.cfg.ClientWorkingDirectory, "nextActions", []string{nextCheckEndpoint}), true, "")
	}
	conn, err := s.sessionOpen(ctx, c)
	if err != nil {
		return fail()
	}
	defer conn.Close()
	sctx, cancel := step(ctx, c)
	defer cancel()
	d, err := conn.Doctor(sctx)
	if err != nil {
		return fail()
	}
	data := d.Raw.Clone()
	actions := []string{nextCheckEndpoint}
	if d.Status == agentproto.DoctorObserved {
		actions = nextActions(d)
	}
	for _, m := range obj("clientWorkingDirectory", s.cfg.ClientWorkingDirectory, "reloadConfirmed", false, "nextActions", actions) {
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
