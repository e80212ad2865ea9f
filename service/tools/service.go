package tools

import (
	"context"
	"encoding/json"
	"os"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/buildguard/buildguard/agentproto"
	"github.com/buildguard/buildguard/buildguard"
	"github.com/buildguard/buildguard/service/safebuild"
)

// Deps is what the tools depend on: the instance configuration that the MCP
// server or the CLI was started with.
type Deps struct {
	// Base is the instance base: the canonical startup --project-dir, else the
	// startup working directory. Empty means os.Getwd() at NewService.
	Base string
	// ProjectSelected is true when the instance was started with
	// --project-dir; it arms the DOCTOR gate on every call. Default false.
	ProjectSelected bool
	// StartupPortFile is the startup --port-file (absolute). It is used only
	// when a call names none of port, portFile, hybrisHome and projectDir.
	// Empty means none.
	StartupPortFile string
	// ClientWorkingDirectory is what doctor reports as the caller's working
	// directory. Empty means os.Getwd() at NewService.
	ClientWorkingDirectory string
	// Dialer connects to agents. The zero value is agentproto's default.
	Dialer agentproto.Dialer
	// Logger receives the safe builds' diagnostics (never protocol, never
	// an owner token). Nil means none.
	Logger hclog.Logger
	// BuildGrace is how long a stopped safe build may take to end after
	// SIGTERM before its process group is killed. Zero means the safe
	// build's default (docs/safe-build.md#6).
	BuildGrace time.Duration
	// VerifyWait bounds the verification of the changed classes after an
	// ok safe build. Zero means the safe build's default.
	VerifyWait time.Duration
	// Advice words what to do next for the front that presents the tools,
	// in the names its users give the settings: after a refused or
	// timed-out safe build, an endpoint without a port file, a project not
	// confirmed. Nil means the tools' own argument names (ArgumentAdvice):
	// what an MCP client passes. The CLI passes its flags'.
	Advice buildguard.Advice
	// AnswerWithin is how long a reclazz_safe_build call without
	// answerWithinMs waits for its build before it answers `running` and
	// leaves the build to go on without it (docs/safe-build.md#14); zero
	// means such a call waits for the whole build.
	AnswerWithin time.Duration
	// KeptBuilds bounds the builds that went on without their call, kept
	// running or finished for the calls that resume them; zero means
	// DefaultKeptBuilds. KeepResult is how long a finished one stays
	// readable; zero means DefaultKeepResult.
	KeptBuilds int
	KeepResult time.Duration

	// builder runs the instance's safe builds, one at a time
	// (reclazz_safe_build, docs/safe-build.md#4); NewService makes it.
	builder *safebuild.Builder
	// detached are the safe builds that go on without their call;
	// NewService makes it.
	detached *detachedBuilds
}

// Service runs the tools of [All] for one instance: the tool caller of the
// MCP server and of the CLI subcommands, so an MCP answer and a CLI answer
// over the same agent state are the same JSON. It is safe for concurrent use.
type Service struct {
	deps  Deps
	tools []*Tool // All's, shared: read only
}

// NewService returns a Service for deps, filling in the defaults of Deps.
func NewService(deps Deps) *Service {
	wd, _ := os.Getwd()
	if deps.Base == "" {
		deps.Base = wd
	}
	if deps.ClientWorkingDirectory == "" {
		deps.ClientWorkingDirectory = wd
	}
	if deps.Advice == nil {
		deps.Advice = ArgumentAdvice
	}
	deps.detached = newDetachedBuilds(deps.KeptBuilds, deps.KeepResult)
	deps.builder = safebuild.New(safebuild.Config{Dialer: deps.Dialer, Grace: deps.BuildGrace, VerifyWait: deps.VerifyWait, Logger: deps.Logger})
	return &Service{deps: deps, tools: all()}
}

// Stop cancels every running safe build, those that go on without their
// call too, and waits until each one's process group is gone and BUILD
// failed was answered (docs/safe-build.md#6); safe builds called later
// are refused. The other tools keep working.
func (s *Service) Stop() { s.deps.builder.Stop() }

// Call validates args and runs the named tool. An invalid call returns an
// *ArgError and touches no agent; the unknown-tool check comes last, as the
// contract orders it. Another error means a broken invariant, not an agent
// problem: unreachable agents, timeouts and rejections are tool results with
// IsError set. Cancelling ctx closes the agent connection at once.
func (s *Service) Call(ctx context.Context, name string, args map[string]json.RawMessage) (Result, error) {
	c, err := s.prepare(name, args)
	if err != nil {
		return Result{}, err
	}
	return c.tool.run(ctx, c)
}

// Check runs the argument checks of Call without touching any agent: it
// returns the *ArgError Call would return for these arguments, or nil when
// Call would run the tool.
func (s *Service) Check(name string, args map[string]json.RawMessage) error {
	_, err := s.prepare(name, args)
	return err
}

// prepare runs every argument check of a call, in the contract's order: the
// common arguments, the tool's existence, the tool's own arguments.
func (s *Service) prepare(name string, args map[string]json.RawMessage) (*toolCall, error) {
	t := findTool(s.tools, name)
	c, err := newCall(&s.deps, t, name, args)
	if c != nil {
		c.passThrough = sharedPassThrough()
	}
	if err != nil {
		return nil, err
	}
	if t == nil {
		return nil, &ArgError{Message: "Unknown tool: " + name, Protocol: true}
	}
	if t.check != nil {
		if err := t.check(c); err != nil {
			return nil, err
		}
	}
	return c, nil
}
