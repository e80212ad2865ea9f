//go:build unix

package hostlanes

import (
	"fmt"
	"regexp"
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
	Checks: func(rec *Record, text string) []Check { return passingChecks(text, rec.ServiceSHA256) },
}

// Scenarios are the scenarios every host runs, in order.
var Scenarios = []Scenario{FailingBuild, PassingBuild}

// The ways a result says a build is ok and a class's new bytes are applied:
// the text's words, or the structured result's fields (also as JSON inside
// a JSON string, as a host may quote it).
var (
	outcomeOK = regexp.MustCompile(`build \\?"` + BuildPassing + `\\?": ok|\\?"outcome\\?":\s*\\?"ok\\?"`)
	applied   = regexp.MustCompile(`\\?"className\\?":\s*\\?"Service\\?",\s*\\?"sha256\\?":\s*\\?"([0-9a-f]{64})\\?",\s*\\?"status\\?":\s*\\?"applied`)
)

// passingChecks check that text says the build is ok and that Service is
// applied with the hash sha256 (the bytes the build left in classes/).
func passingChecks(text, sha256 string) []Check {
	ok := Check{Name: "says-ok", OK: outcomeOK.MatchString(text)}
	ok.Detail = fmt.Sprintf("%q", cut(text, 200))
	if loc := outcomeOK.FindStringIndex(text); loc != nil {
		ok.Detail = fmt.Sprintf("%q at byte %d", text[loc[0]:loc[1]], loc[0])
	}
	app := Check{Name: "names-applied-class", Detail: "Service is not named as applied"}
	if m := applied.FindStringSubmatchIndex(text); m != nil {
		app.OK = text[m[2]:m[3]] == sha256
		app.Detail = fmt.Sprintf("%q at byte %d, built bytes %s", text[m[0]:m[1]], m[0], sha256)
	}
	return []Check{ok, app}
}
