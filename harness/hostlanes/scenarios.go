//go:build unix

package hostlanes

import (
	"fmt"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/buildguard/buildguard/harness/hostlanes/model"
)

// Scenario is what a lane asks a host to do, and what the host's model
// must then see (docs/host-matrix.md#2).
type Scenario struct {
	// Name is the scenario's name in the matrix.
	Name string
	// Build is the build of .buildguard.json the model asks for.
	Build string
	// Prompt is what the user asks the host.
	Prompt string
	// ToolTimeout, when set, is the host's tool timeout for the lane, set
	// through the host's own setting.
	ToolTimeout time.Duration
	// AnswerWithin, when set, is given to `buildguard init --answer-within`,
	// and the model resumes each running answer (model.Script.Resumes).
	AnswerWithin time.Duration
	// Ahead, when set, is a build of .buildguard.json that
	// `buildguard build run` starts before the host, so that the host's call
	// waits behind it in the project's build queue.
	Ahead string
	// Checks judge text, the safe build's result as the model received it
	// ("" when none reached it).
	Checks func(rec *Record, text string) []Check
}

// FailingBuild asks for the build that fails with two javac errors: the
// model must read the first one's file and line first.
var FailingBuild = Scenario{
	Name:   "failing-build",
	Build:  BuildFailing,
	Prompt: "Run the project's build with the buildguard safe build tool and tell me the first compiler error.",
	Checks: func(rec *Record, text string) []Check { return firstErrorChecks(text, rec.FirstError) },
}

// PassingBuild asks for the build that compiles a changed Service.java: the
// model must read that the build is ok and that Service's new bytes are
// applied in the JVM.
var PassingBuild = Scenario{
	Name:   "passing-build",
	Build:  BuildPassing,
	Prompt: "Compile the project with the buildguard safe build tool (build \"compile\") and tell me which classes changed.",
	Checks: func(rec *Record, text string) []Check { return passingChecks(text, rec.ServiceSHA256, BuildPassing) },
}

// LongBuild asks for a build that runs longer than the host's tool
// timeout, set to 7 s through the host's own setting, with the entry init
// wrote answering within 4 s; the build prints a line a second and takes
// about 10 s. The call answers running with a buildId, the model resumes it
// until the build's own result, and that result must be the build's ok and
// applied class, never an ok the build did not earn.
//
// Gemini CLI 0.61.0 stops a session whose model makes one tool call with
// the same arguments 5 times in a row ("Loop detected"): the first call and
// at most 4 identical resumes reach the server, so 4 s leaves the build up
// to 20 s, twice what it takes, before a slow machine trips that.
var LongBuild = Scenario{
	Name:         "long-build",
	Build:        BuildLong,
	Prompt:       "Run the project's slow build with the buildguard safe build tool (build \"slow\") and tell me how it ended.",
	ToolTimeout:  7 * time.Second,
	AnswerWithin: 4 * time.Second,
	Checks: func(rec *Record, text string) []Check {
		return []Check{earnedOK(rec, text), resumedToResult(rec)}
	},
}

// QueuedBuild asks for the passing build while `buildguard build run slow`
// holds the agent: the host's call waits its turn in the project's queue,
// then runs; the model must read its own build's ok and applied class.
var QueuedBuild = Scenario{
	Name:   "queued-build",
	Build:  BuildPassing,
	Ahead:  BuildLong,
	Prompt: PassingBuild.Prompt,
	Checks: func(rec *Record, text string) []Check {
		return append(passingChecks(text, rec.ServiceSHA256, BuildPassing), tookTurns(rec))
	},
}

// Scenarios are the scenarios every host runs, in order.
var Scenarios = []Scenario{FailingBuild, PassingBuild, LongBuild, QueuedBuild}

// tookTurns checks that the model asked for its build while the build
// ahead still ran (before the agent's first BUILD ok), that the agent saw
// two guarded builds one after the other, each BUILD started answered by
// its own BUILD ok before the next began, and that the build ahead exited 0.
func tookTurns(rec *Record) Check {
	builds, aheadExit := rec.AgentBuilds, rec.AheadExit
	c := Check{Name: "took-its-turn", OK: true}
	active, oks := "", 0
	for _, line := range builds {
		f := strings.Fields(line)
		owner := ""
		if len(f) > 0 {
			owner = f[len(f)-1]
		}
		switch {
		case strings.HasPrefix(line, "BUILD started"):
			if active != "" {
				c.OK, c.Detail = false, fmt.Sprintf("%s while %s was running", line, active)
			}
			active = owner
		case strings.HasPrefix(line, "BUILD ok") && owner == active:
			active, oks = "", oks+1
		default:
			c.OK, c.Detail = false, fmt.Sprintf("unexpected %s (running: %q)", line, active)
		}
		if !c.OK {
			return c
		}
	}
	waited := !rec.CallAsked.IsZero() && rec.CallAsked.Before(rec.FirstBuildOK)
	c.OK = oks == 2 && aheadExit == 0 && waited
	c.Detail = fmt.Sprintf("%d builds, one after the other; the build ahead exited %d; the model asked %v before the first BUILD ok",
		oks, aheadExit, rec.FirstBuildOK.Sub(rec.CallAsked).Round(time.Millisecond))
	return c
}

// maxResumes bounds the model's resume calls in a lane: the long build
// takes about 10 s, answered every 4 s.
const maxResumes = 20

// resumedToResult checks the resume loop of the long build
// (docs/host-matrix.md#2): the safe build's first answers reached the
// model as running with one buildId, the model resumed with that id after
// each, the last answer is the build's own result (ok, Service applied with
// the bytes the build wrote), and the agent saw that one build started and
// ok, nothing failed.
func resumedToResult(rec *Record) Check {
	c := Check{Name: "resumed-to-result"}
	results := rec.Received[min(rec.SafeBuildFrom, len(rec.Received)):]
	var ids []string
	for _, r := range results {
		if id, ok := model.RunningBuildID(r.Text); ok {
			ids = append(ids, id)
		}
	}
	agent := strings.Join(rec.AgentBuilds, "; ")
	switch {
	case len(results) < 2 || len(ids) == 0:
		c.Detail = fmt.Sprintf("%d safe build results reached the model, %d of them running; no resume loop", len(results), len(ids))
	case len(ids) != len(results)-1:
		c.Detail = fmt.Sprintf("%d safe build results, %d running: want every one running but the last", len(results), len(ids))
	case !slices.Equal(ids, rec.Resumes):
		c.Detail = fmt.Sprintf("the model resumed %q after running answers with %q", rec.Resumes, ids)
	case slices.ContainsFunc(ids, func(id string) bool { return id != ids[0] }):
		c.Detail = fmt.Sprintf("the running answers name more than one build: %q", ids)
	case !oneBuildOK(rec.AgentBuilds):
		c.Detail = fmt.Sprintf("the agent got %q, want one BUILD started and its BUILD ok", agent)
	default:
		last := results[len(results)-1].Text
		checks := passingChecks(last, rec.ServiceSHA256, BuildLong)
		c.OK = checks[0].OK && checks[1].OK
		c.Detail = fmt.Sprintf("%d running answers for build %s, each resumed with its id; then %s; %s; the agent got %s",
			len(ids), ids[0], checks[0].Detail, checks[1].Detail, agent)
	}
	return c
}

// oneBuildOK says whether builds are one BUILD started and then the
// BUILD ok of the same owner.
func oneBuildOK(builds []string) bool {
	if len(builds) != 2 || !strings.HasPrefix(builds[0], "BUILD started ") || !strings.HasPrefix(builds[1], "BUILD ok ") {
		return false
	}
	f0, f1 := strings.Fields(builds[0]), strings.Fields(builds[1])
	return f0[len(f0)-1] == f1[len(f1)-1]
}

// earnedOK checks that a result that says the long build is ok was earned:
// the build compiled to its end and the agent got BUILD ok. A result
// that does not say ok passes, and the detail says what the model read.
func earnedOK(rec *Record, text string) Check {
	c := Check{Name: "no-unearned-ok"}
	says := regexp.MustCompile(`build \\?"` + BuildLong + `\\?": ok|\\?"outcome\\?":\s*\\?"ok\\?"`).MatchString(text)
	gotOK := false
	for _, b := range rec.AgentBuilds {
		gotOK = gotOK || strings.HasPrefix(b, "BUILD ok")
	}
	switch {
	case says:
		c.OK = rec.SlowDone && gotOK
		c.Detail = fmt.Sprintf("the model read ok; the build compiled to its end: %v; the agent got BUILD ok: %v", rec.SlowDone, gotOK)
	default:
		c.OK = true
		c.Detail = fmt.Sprintf("the model did not read ok (the build compiled to its end: %v; the agent got BUILD ok: %v); it read %q",
			rec.SlowDone, gotOK, cut(text, 200))
	}
	return c
}

// The ways a result says a build is ok and a class's new bytes are applied:
// the text's words, or the structured result's fields (also as JSON inside
// a JSON string, as a host may quote it).
var (
	applied = regexp.MustCompile(`\\?"className\\?":\s*\\?"Service\\?",\s*\\?"sha256\\?":\s*\\?"([0-9a-f]{64})\\?",\s*\\?"status\\?":\s*\\?"applied`)
)

// outcomeOK matches where a result says build is ok: the text's words, or
// the structured result's outcome (also as JSON inside a JSON string).
func outcomeOK(build string) *regexp.Regexp {
	return regexp.MustCompile(`build \\?"` + regexp.QuoteMeta(build) + `\\?": ok|\\?"outcome\\?":\s*\\?"ok\\?"`)
}

// passingChecks check that text says build is ok and that Service is
// applied with the hash sha256 (the bytes the build left in classes/).
func passingChecks(text, sha256, build string) []Check {
	says := outcomeOK(build)
	ok := Check{Name: "says-ok", OK: says.MatchString(text)}
	ok.Detail = fmt.Sprintf("%q", cut(text, 200))
	if loc := says.FindStringIndex(text); loc != nil {
		ok.Detail = fmt.Sprintf("%q at byte %d", text[loc[0]:loc[1]], loc[0])
	}
	app := Check{Name: "names-applied-class", Detail: "Service is not named as applied"}
	if m := applied.FindStringSubmatchIndex(text); m != nil {
		app.OK = text[m[2]:m[3]] == sha256
		app.Detail = fmt.Sprintf("%q at byte %d, built bytes %s", text[m[0]:m[1]], m[0], sha256)
	}
	return []Check{ok, app}
}
