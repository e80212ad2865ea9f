package safebuild

import (
	"bytes"
	"encoding/json"
	"fmt"

	"github.com/buildguard/buildguard/service/diagnostics"
)

// The outcomes of a safe build (docs/safe-build.md#7). Only OutcomeOK is not
// a tool error.
const (
	// OutcomeOK: the command exited 0 with nothing of its process group
	// left, and BUILD ok was acknowledged: the agent releases the output.
	OutcomeOK = "ok"
	// OutcomeFailed: the command exited non-zero, could not start, left
	// processes behind, or its finish was not confirmed. The output stays
	// held for the project's owner.
	OutcomeFailed = "failed"
	// OutcomeCancelled: the call was cancelled (or its client went away);
	// the process group was terminated and BUILD failed sent.
	OutcomeCancelled = "cancelled"
	// OutcomeTimeout: the build ran out of time; the process group was
	// terminated and BUILD failed sent.
	OutcomeTimeout = "timeout"
	// OutcomeRefused: the command never started: the agent could not be
	// reached or refused the hold, or the project's state cannot be used.
	OutcomeRefused = "refused"
	// OutcomeQueuedTimeout: the build waited queueTimeoutSeconds in the
	// project's build queue without getting its turn; nothing ran and no
	// hold was taken (docs/decisions.md#D18).
	OutcomeQueuedTimeout = "queued-timeout"
	// OutcomeRunning: the build was still running (or waiting for its
	// turn) when the MCP call that started it had to answer; it goes on
	// without that call, and a call with its BuildID returns its result
	// (docs/safe-build.md#14). Never an outcome of Builder.Run.
	OutcomeRunning = "running"
)

// Result is the outcome of one safe build: the structuredContent of
// reclazz_safe_build and the line `buildguard build run` prints. Its fields
// are encoded in this order: the outcome, the counts and the diagnostics
// first, so that a host that shows the JSON leads with the errors
// (docs/safe-build.md#7).
type Result struct {
	// Outcome is one of the Outcome constants.
	Outcome string `json:"outcome"`
	// BuildID names a build that goes on without its call: only with
	// OutcomeRunning, for the call that waits for its result.
	BuildID string `json:"buildId,omitempty"`
	// ExitCode is the command's exit code (128+n after signal n); nil when
	// it never started.
	ExitCode *int `json:"exitCode"`
	// Errors and Warnings count every distinct diagnostic of each severity
	// found in the output, listed or not.
	Errors   int `json:"errors"`
	Warnings int `json:"warnings"`
	// DiagnosticsOmitted counts the diagnostics found beyond those listed.
	DiagnosticsOmitted int `json:"diagnosticsOmitted"`
	// Diagnostics are the errors and warnings parsed from the build's
	// output (docs/safe-build.md#12): errors first, duplicates merged, at
	// most diagnostics.MaxDiagnostics; empty when the command never ran.
	Diagnostics []diagnostics.Diagnostic `json:"diagnostics"`
	// FailedTasks are the Gradle tasks and Maven goals the output reported
	// failed; FailedModules their modules.
	FailedTasks   []string `json:"failedTasks"`
	FailedModules []string `json:"failedModules"`
	// Detail says what happened and what to do next.
	Detail string `json:"detail"`
	// ChangedClasses proves the bytes after an ok build; empty otherwise.
	ChangedClasses ChangedClasses `json:"changedClasses"`
	// Output is the bounded tail of the build's output and its log.
	Output Output `json:"output"`
	// Build is the build's name.
	Build string `json:"build"`
	// Command is the argument vector that ran (or would have).
	Command []string `json:"command"`
	// DurationMs is the time from asking for the hold to the finish.
	DurationMs int64 `json:"durationMs"`
	// Owner is the owner token the build held the output with; nil when it
	// never asked the agent for a hold.
	Owner *string `json:"owner"`
}

// Output is the build's output in a result (docs/safe-build.md#7): the
// log's path first, the tail last.
type Output struct {
	// LogFile is the absolute path of the complete log under
	// <project>/.buildguard/logs/; nil when no log was written.
	LogFile *string `json:"logFile"`
	// Lines counts every line the build printed.
	Lines int `json:"lines"`
	// Truncated reports that Tail is not the whole output.
	Truncated bool `json:"truncated"`
	// Tail is the end of the output: at most TailLines lines and TailBytes
	// bytes of stdout and stderr as they came.
	Tail string `json:"tail"`
}

// IsError reports whether the result is a tool error: every outcome but
// ok and running.
func (r *Result) IsError() bool { return r.Outcome != OutcomeOK && r.Outcome != OutcomeRunning }

// JSON encodes the result as one compact JSON object of at most
// MaxResultJSON bytes: what does not fit is cut as fit says (the tail from
// its start, the lists from their end, the left-out diagnostics counted in
// diagnosticsOmitted, changed classes still counted in count). r itself
// keeps everything.
func (r *Result) JSON() ([]byte, error) {
	if r.Command == nil {
		r.Command = []string{}
	}
	if r.ChangedClasses.Classes == nil {
		r.ChangedClasses.Classes = []ClassReceipt{}
	}
	if r.Diagnostics == nil {
		r.Diagnostics = []diagnostics.Diagnostic{}
	}
	if r.FailedTasks == nil {
		r.FailedTasks = []string{}
	}
	if r.FailedModules == nil {
		r.FailedModules = []string{}
	}
	fitted := r.fit()
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false) // output and commands are shown as they are
	if err := enc.Encode(&fitted); err != nil {
		return nil, fmt.Errorf("encoding the safe build result: %w", err)
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n")), nil
}
