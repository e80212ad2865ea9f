package buildguard

import (
	"fmt"
	"strings"
)

// Setting is one setting of a guarded build that a user can change. Each
// front names it its own way: the command line as a flag (--port-file PATH),
// an MCP tool as an argument (portFile); this package never names it.
type Setting string

// The settings a refusal can point at.
const (
	SettingProjectDir Setting = "project directory" // where the agent's port file is discovered
	SettingPortFile   Setting = "port file"         // the agent's port file
	SettingPort       Setting = "port"              // the agent's port
	SettingTimeout    Setting = "timeout"           // the bound of each exchange with the agent
	SettingOwner      Setting = "owner"             // the build's owner token
	SettingGrace      Setting = "grace"             // the grace period
	SettingTranscript Setting = "transcript"        // the transcript file
	SettingBuildTime  Setting = "build time limit"  // the time limit of a whole build (a service's, such as the safe build's)
)

// Fix is the kind of step that gets past a refusal, or past another error
// of this package or of the wire; a front turns it into words for its users
// (Advice).
type Fix int

// The fixes of a refusal.
const (
	// FixNone: nothing the user does changes the outcome (the build was
	// cancelled, or no command was given).
	FixNone Fix = iota
	// FixRetry: the agent is there but did not take part; check that the
	// application runs and responds, and try again. No setting.
	FixRetry
	// FixDiscovery: no port file where discovery looked; run in (or name)
	// the application's project directory, or give the port file or port.
	FixDiscovery
	// FixPortFile: the port file given cannot be used; point at the one the
	// running agent wrote, or give the port.
	FixPortFile
	// FixPort: the port given is not a port; give the agent's port, or its
	// port file.
	FixPort
	// FixStartAgent: nothing answers on the port; start the application with
	// the agent, or point at its current port.
	FixStartAgent
	// FixNotAgent: what answers on the port is not a Reclazz agent; point at
	// the agent's current port.
	FixNotAgent
	// FixTimeout: the timeout given is not a whole number of milliseconds
	// from 1 to 60000.
	FixTimeout
	// FixAckTimeout: the agent did not answer within the timeout; check that
	// the application responds, or allow more time.
	FixAckTimeout
	// FixOwner: another owner holds the output; that owner must finish or
	// recover its build, or the application be restarted.
	FixOwner
	// FixTranscript: the transcript file cannot be created; give one in a
	// writable directory.
	FixTranscript
	// FixUpgradeAgent: the agent answered without the owner it was given,
	// so it predates build ownership; attach a newer agent. No setting.
	FixUpgradeAgent
	// FixRerun: the agent did not acknowledge the end of a build and may
	// still hold the output for its owner (*UnconfirmedError); a complete
	// build with that owner releases it.
	FixRerun
	// FixRelease: a second interrupt ended a wait for the agent, which may
	// still hold the output for the owner (*AbandonedError); a complete
	// build with that owner releases it.
	FixRelease
	// FixFindAgent: no port file was found where the endpoint looked
	// (agentproto.ErrNoPortFile); run the application with the agent, or
	// give its port or port file.
	FixFindAgent
	// FixConfirmProject: the agent's working directory could not be
	// confirmed inside the selected project
	// (agentproto.ErrProjectNotConfirmed); compare DOCTOR's
	// workingDirectory with the project directory.
	FixConfirmProject
	// FixBuildTime: a whole build ran out of its time limit (a service's,
	// such as the safe build's); allow it more time.
	FixBuildTime
)

// settings are the settings each fix changes, the one to try first first.
var settings = map[Fix][]Setting{
	FixDiscovery:      {SettingProjectDir, SettingPortFile, SettingPort},
	FixPortFile:       {SettingPortFile, SettingPort},
	FixPort:           {SettingPort, SettingPortFile},
	FixStartAgent:     {SettingPort, SettingPortFile},
	FixNotAgent:       {SettingPort, SettingPortFile},
	FixTimeout:        {SettingTimeout},
	FixAckTimeout:     {SettingTimeout},
	FixOwner:          {SettingOwner},
	FixTranscript:     {SettingTranscript},
	FixRerun:          {SettingOwner},
	FixRelease:        {SettingOwner},
	FixFindAgent:      {SettingPort, SettingPortFile},
	FixConfirmProject: {SettingProjectDir},
	FixBuildTime:      {SettingBuildTime},
}

// Settings returns the settings the fix changes, the one to try first
// first; none for FixNone and FixRetry.
func (f Fix) Settings() []Setting { return settings[f] }

// RefusalError is a build refused before its command started. It wraps
// ErrRefused and Problem, says what was missing or wrong and which fix
// gets past it, and names no flag or argument: a front words the fix for
// its users (Advice.Word). Guard.Run and Options.Config return it.
type RefusalError struct {
	// Stage is what could not be done, e.g. "Cannot open build session";
	// "" when Problem says it all.
	Stage string
	// Problem is what was missing or wrong: the endpoint's, the agent's or
	// the option's error.
	Problem error
	// Fix is what gets past it; Fix.Settings names the settings involved.
	Fix Fix
	// After says what became of a hold that may have been taken (BUILD
	// started sent but not acknowledged, then BUILD failed); "" when no
	// hold was asked for or the agent rejected it.
	After string
}

// Word returns the refusal's text with advice, the front's words for Fix,
// between what went wrong and what became of the hold:
// "build refused: STAGE: PROBLEM; ADVICE; AFTER".
func (e *RefusalError) Word(advice string) string {
	return e.word(e.Problem.Error(), advice)
}

// word is the refusal's text with problem, the text of Problem, and advice.
func (e *RefusalError) word(problem, advice string) string {
	var b strings.Builder
	b.WriteString(ErrRefused.Error())
	b.WriteString(": ")
	if e.Stage != "" {
		b.WriteString(e.Stage)
		b.WriteString(": ")
	}
	b.WriteString(problem)
	for _, s := range []string{advice, e.After} {
		if s != "" {
			b.WriteString("; ")
			b.WriteString(s)
		}
	}
	return b.String()
}

// Error is the refusal without advice; a front adds its own (Word).
func (e *RefusalError) Error() string { return e.Word("") }

// Unwrap makes the refusal ErrRefused and its Problem.
func (e *RefusalError) Unwrap() []error { return []error{ErrRefused, e.Problem} }

// refused is a RefusalError with a problem made of format and args.
func refused(fix Fix, format string, args ...any) *RefusalError {
	return &RefusalError{Problem: fmt.Errorf(format, args...), Fix: fix}
}

// UnconfirmedError means the agent did not acknowledge (or rejected) the
// BUILD that ended the build: it may still hold the output for this owner,
// which the owner's next complete build releases. It wraps ErrUnsafe and
// the agent's error; a front says how its users rerun with the owner.
type UnconfirmedError struct {
	// State is the BUILD state that was not acknowledged: ok or failed.
	State string
	// Err is the agent's error.
	Err error
	// Launch, when not nil, is why the command could not be started; BUILD
	// failed was sent for it.
	Launch error
}

func (e *UnconfirmedError) Error() string {
	if e.Launch != nil {
		return fmt.Sprintf("%v: %v; then BUILD %s was not acknowledged (%v); the agent may still hold the output", ErrUnsafe, e.Launch, e.State, e.Err)
	}
	return fmt.Sprintf("%v: BUILD %s was not acknowledged (%v); the agent may still hold the output", ErrUnsafe, e.State, e.Err)
}

// Unwrap makes the error ErrUnsafe, the agent's error and the launch error.
func (e *UnconfirmedError) Unwrap() []error {
	if e.Launch != nil {
		return []error{ErrUnsafe, e.Err, e.Launch}
	}
	return []error{ErrUnsafe, e.Err}
}
