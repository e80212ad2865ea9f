package tools

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/buildguard/buildguard/agentproto"
	"github.com/buildguard/buildguard/buildguard"
	"github.com/buildguard/buildguard/service/diagnostics"
	"github.com/buildguard/buildguard/service/safebuild"
)

// ToolSafeBuild runs the project's configured build under an owned hold and
// proves the bytes it released, in one call (docs/safe-build.md).
const ToolSafeBuild = "reclazz_safe_build"

func safeBuildTool() *Tool {
	return &Tool{
		Name: ToolSafeBuild,
		description: "Build the project and hot-reload the result safely, in one call; prefer it to reclazz_build. " +
			"It runs the project's own build command (from .buildguard.json, else ./gradlew classes or mvn -q compile; never a command you pass), " +
			"takes the agent's hold before the build starts, releases the new classes only when the build exits 0 with nothing left running, " +
			"and then verifies every changed class against the running JVM: only changedClasses.allApplied true proves the new bytes are live. " +
			"On any other outcome (failed, cancelled, timeout, refused) the JVM keeps serving its old classes: read diagnostics (the compiler's errors with file and line, errors first) and detail, fix the code, call again; the whole log is a resource link. " +
			"Builds of a project run one at a time in arrival order, across every server and terminal: a call while another build runs waits its turn instead of failing (its progress says where it stands), and a call identical to one still waiting joins it and gets the same result. " +
			"Outcome running means the build goes on without the call (answerWithinMs, or the server's --answer-within, was reached): call again with resume set to its buildId, until the outcome is not running. " +
			"Send a progressToken for progress; cancellable through notifications/cancelled. Use reclazz_build only for a build you must run yourself.",
		inputSchema: func() agentproto.Object {
			return inputSchema("Time limit of the whole build in milliseconds, as an integer string, 1-60000. Default 600000 (10 minutes), or the build's timeoutSeconds from .buildguard.json.", object(
				"build", object("type", "string", "maxLength", 64, "pattern", safeBuildNamePattern, "description", "Name of a build configured in .buildguard.json (or gradle/maven when detected). Default: its defaultBuild."),
				"answerWithinMs", stringProp(maxArgLength, "Answer within this many milliseconds, as an integer string, 1000-600000: a build still running then goes on, and the call answers outcome running with its buildId. Set it below your host's tool timeout. Default: the server's --answer-within, else wait for the whole build."),
				"resume", stringProp(maxBuildID, "The buildId of a running result: wait (at most answerWithinMs) for that build and return its result, or running again. Every other argument is ignored."),
			))
		},
		outputSchema: safeBuildOutputSchema,
		annotations:  mutating(),
		check:        checkSafeBuild,
		run:          runSafeBuild,
		CLI: CLIForm{Command: "build run", Usage: "[NAME]",
			Args: func(pos []string, _ map[string]string) (map[string]any, error) {
				switch len(pos) {
				case 0:
					return map[string]any{}, nil
				case 1:
					return map[string]any{"build": pos[0]}, nil
				}
				return nil, errors.New("build run takes at most one build NAME")
			}},
	}
}

// ArgumentAdvice is what the tools tell an MCP client to do next, in the
// tools' arguments (portFile, port, projectDir, timeoutMs), never in a
// command-line flag: after a refused or timed-out safe build, and after an
// endpoint or project the agent cannot be found or confirmed in, where
// these words complete the contract's reason strings
// (docs/mcp-server.md#1.2). The agent's acknowledgement timeout is not one
// of the safe build's arguments (timeoutMs bounds the whole build), so an
// agent that answers too late is retried, not given more time.
var ArgumentAdvice = buildguard.Advice{
	buildguard.FixRetry:          "check that the application is running and responsive, and call again",
	buildguard.FixDiscovery:      "the agent writes .reclazz/agent.port in the application's project directory: pass projectDir that directory, or portFile the agent's port file, or port its port",
	buildguard.FixPortFile:       "point portFile at the port file the running agent wrote (.reclazz/agent.port in its project), or pass port",
	buildguard.FixPort:           "pass port the agent's port (1 to 65535), or portFile its port file",
	buildguard.FixStartAgent:     "start the application with the Reclazz agent attached, or point port/portFile at its current port",
	buildguard.FixNotAgent:       "what answers on that port is not a Reclazz agent: point port/portFile at the agent's current port",
	buildguard.FixAckTimeout:     "the agent did not answer in time: check that the application is responsive, and call again",
	buildguard.FixOwner:          "another build holds the output: it must finish, or a build with the owner it printed must recover it; restart the application if that owner is lost",
	buildguard.FixUpgradeAgent:   "the agent is older than build ownership: attach a Reclazz agent that answers BUILD with owner=, then retry",
	buildguard.FixFindAgent:      "run the app with the Reclazz agent, or pass port/portFile",
	buildguard.FixConfirmProject: "Check DOCTOR workingDirectory and projectDir.",
	buildguard.FixBuildTime:      "Raise timeoutSeconds in " + safebuild.ConfigFile + " or pass a larger timeoutMs",
}

const safeBuildNamePattern = "^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$"

// checkSafeBuild checks answerWithinMs and resume and selects the build,
// touching no agent. A call that resumes a build selects none: it names
// one already running.
func checkSafeBuild(c *toolCall) error {
	if _, err := answerWithin(c); err != nil {
		return err
	}
	if id, resumes, err := resumeID(c); err != nil || resumes {
		if err == nil && c.deps.detached.get(id) == nil {
			err = errUnknownBuild(id)
		}
		return err
	}
	_, err := selectBuild(c)
	return err
}

// answerWithin is the call's answerWithinMs, else the service's default
// (Deps.AnswerWithin); zero means the call waits for its whole build.
func answerWithin(c *toolCall) (time.Duration, error) {
	raw, ok := c.args["answerWithinMs"]
	if !ok {
		return c.deps.AnswerWithin, nil
	}
	var v string
	if len(raw) == 0 || raw[0] != '"' || json.Unmarshal(raw, &v) != nil {
		return 0, argErrorIn("answerWithinMs", "must be a string")
	}
	lo, hi := MinAnswerWithin.Milliseconds(), MaxAnswerWithin.Milliseconds()
	n, ok := agentproto.ParseJavaInt(v)
	if !ok || int64(n) < lo || int64(n) > hi {
		return 0, argErrorIn("answerWithinMs", "must be an integer string between %d and %d", lo, hi)
	}
	return time.Duration(n) * time.Millisecond, nil
}

// maxBuildID bounds resume: a build id is 32 characters.
const maxBuildID = 64

// resumeID is the build the call resumes, and whether it names one.
func resumeID(c *toolCall) (string, bool, error) {
	raw, ok := c.args["resume"]
	if !ok {
		return "", false, nil
	}
	var id string
	if len(raw) == 0 || raw[0] != '"' || json.Unmarshal(raw, &id) != nil || id == "" || len(id) > maxBuildID {
		return "", false, argErrorIn("resume", "must be the buildId of a running result, a string of at most %d characters", maxBuildID)
	}
	return id, true, nil
}

// errUnknownBuild is the argument error of a resume this server cannot
// answer: what happened and what to do.
func errUnknownBuild(id string) error {
	if len(id) > 40 || agentproto.HasControl(id) {
		id = "that id"
	} else {
		id = strconv.Quote(id)
	}
	return argErrorIn("resume", "%s names no build of this server: a build's result is kept %s after it ended, %d at most, and only by the server process that answered running. "+
		"Call reclazz_safe_build without resume to build again; every build's log stays in .buildguard/logs/", id, DefaultKeepResult, DefaultKeptBuilds)
}

// selectBuild reads the project's builds and selects the one named: an
// unknown name and an unusable .buildguard.json are argument errors, before
// anything connects or runs (docs/safe-build.md#2).
func selectBuild(c *toolCall) (safebuild.Build, error) {
	name := ""
	if raw, ok := c.args["build"]; ok {
		if len(raw) == 0 || raw[0] != '"' || json.Unmarshal(raw, &name) != nil {
			return safebuild.Build{}, argError("build must be a string")
		}
		if name == "" {
			return safebuild.Build{}, argError("build must name a configured build")
		}
	}
	p, err := safebuild.LoadProject(c.endpoint.Base)
	if err != nil {
		return safebuild.Build{}, argError("%v", err)
	}
	b, err := p.Select(name)
	if err != nil {
		return safebuild.Build{}, argError("%v", err)
	}
	return b, nil
}

// runSafeBuild runs the selected build on the instance's builder, one at a
// time, reporting progress when the call asked for it.
func runSafeBuild(ctx context.Context, c *toolCall) (Result, error) {
	if id, resumes, err := resumeID(c); err != nil || resumes {
		if err != nil {
			return Result{}, err
		}
		return resumeBuild(ctx, c, id)
	}
	// Selected again: the configuration may have changed since the check,
	// and what runs must be what the file says now.
	build, err := selectBuild(c)
	if err != nil {
		return Result{}, err
	}
	req := safebuild.Request{
		Dir:      c.endpoint.Base,
		Build:    build,
		Endpoint: c.endpoint,
		Confirm:  c.project,
		Progress: progressFrom(ctx),
		Advice:   c.deps.Advice,
		Queued:   queuedFrom(ctx),
	}
	if _, given := c.str["timeoutMs"]; given {
		req.Timeout = c.timeout
	}
	within, err := answerWithin(c)
	if err != nil {
		return Result{}, err
	}
	if within == 0 || wholeBuild(ctx) {
		return safeBuildAnswer(c.deps.builder.Run(ctx, req))
	}
	return runDetachable(ctx, c.deps.detached, c.deps.builder, req, within)
}

// runDetachable runs the build of req on a goroutine of its own and waits
// for it at most within (docs/safe-build.md#14). Until then the call's
// cancellation cancels the build, as for every build; after it, a build
// still running is kept in ds and goes on without the call, which answers
// running with its id. When ds has no room (every kept build still runs)
// the call waits for the whole build.
func runDetachable(ctx context.Context, ds *detachedBuilds, b *safebuild.Builder, req safebuild.Request, within time.Duration) (Result, error) {
	start := time.Now()
	d := &detachedBuild{watch: newBuildWatch(req.Build, start), within: within, done: make(chan struct{})}
	unlisten := d.watch.listen(req.Progress, req.Queued)
	defer unlisten()
	req.Progress, req.Queued, req.LogStarted = d.watch.progress, d.watch.queue, d.watch.logStarted
	bctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	unbind := context.AfterFunc(ctx, cancel)
	go func() {
		defer cancel()
		answer, err := safeBuildAnswer(b.Run(bctx, req))
		d.finish(ds, answer, err)
	}()
	timer := time.NewTimer(within)
	defer timer.Stop()
	select {
	case <-d.done:
	case <-ctx.Done(): // the build is being cancelled
	case <-timer.C:
		// Unhooked from the call first: a call cancelled at this very
		// moment has cancelled its build, and that build is not kept.
		if !ended(d) && unbind() {
			if ds.keep(d) {
				return runningAnswer(d, time.Now())
			}
			context.AfterFunc(ctx, cancel) // no room: the call waits, its cancel ends the build
		}
	}
	<-d.done // bounded by the build's own limits, as a call without answerWithin is
	return d.answer, d.err
}

// resumeBuild waits, at most the call's answerWithinMs (else that of the
// call that started the build), for the detached build id and returns its
// answer, exactly as the call that started it would have; or running
// again. Cancelling the call never cancels the build.
func resumeBuild(ctx context.Context, c *toolCall, id string) (Result, error) {
	d := c.deps.detached.get(id)
	if d == nil {
		return Result{}, errUnknownBuild(id)
	}
	within := d.within
	if _, given := c.args["answerWithinMs"]; given {
		within, _ = answerWithin(c) // checked by checkSafeBuild
	}
	if wholeBuild(ctx) {
		within = MaxAnswerWithin
	}
	unlisten := d.watch.listen(progressFrom(ctx), queuedFrom(ctx))
	defer unlisten()
	timer := time.NewTimer(within)
	defer timer.Stop()
	select {
	case <-d.done:
	case <-ctx.Done(): // not answered; the build goes on
	case <-timer.C:
	}
	if !ended(d) {
		return runningAnswer(d, time.Now())
	}
	c.deps.detached.markRead(d)
	return d.answer, d.err
}

// ended reports whether d's build has its answer.
func ended(d *detachedBuild) bool {
	select {
	case <-d.done:
		return true
	default:
		return false
	}
}

// runningAnswer is the answer of a call whose build goes on without it:
// outcome running, the build's id, how long it has gone on, where its log
// is written, and how to get its result, in the structured result (what
// Codex shows its model) and in the text (what Claude Code shows).
func runningAnswer(d *detachedBuild, now time.Time) (Result, error) {
	logFile, lines, latest, queued := d.watch.snapshot()
	elapsed := now.Sub(d.watch.start).Round(100 * time.Millisecond)
	res := &safebuild.Result{Outcome: safebuild.OutcomeRunning, BuildID: d.id,
		Build: d.watch.build.Name, Command: d.watch.build.Command, DurationMs: now.Sub(d.watch.start).Milliseconds(),
		Output: safebuild.Output{Lines: lines, Truncated: lines > 0}}
	where := "still waits for its turn in the project's build queue"
	if queued != "" {
		where += " (" + diagnostics.Visible(queued) + ")"
	}
	if logFile != "" {
		res.Output.LogFile = &logFile
		where = "is running, writing its log to " + diagnostics.Visible(logFile)
		if latest != "" {
			where += fmt.Sprintf(" (%d lines so far, the latest: %q)", lines, diagnostics.Visible(latest))
		}
	}
	// The next step first: what does not fit in a host's budget is cut
	// from the end (safebuild.Result.JSON, the text's bound).
	res.Detail = fmt.Sprintf("the build goes on without this call, which stopped waiting after %s as answerWithinMs (or the server's --answer-within) asks; nothing was released yet. "+
		"Call reclazz_safe_build again with resume %q (nothing else is needed) to wait for its result, the answer this call would have given; repeat while the outcome is running "+
		"(a call without resume would queue another build behind it). The build %s", elapsed, d.id, cutText(where, 1024))
	data, err := res.JSON()
	if err != nil {
		return Result{}, err
	}
	head := cutText(fmt.Sprintf("build %q: running after %s; buildId %s", res.Build, elapsed, d.id), 512)
	text := head + "\n" + cutText(diagnostics.Visible(res.Detail), 2048) + "\n"
	return Result{Data: data, Text: text, LegacyText: text}, nil
}

// earlyKey marks a call that waits for its whole build whatever
// answerWithinMs says.
type earlyKey struct{}

// WithWholeBuild returns a context whose reclazz_safe_build call waits for
// its whole build, ignoring answerWithinMs and Deps.AnswerWithin, and whose
// resume waits up to MaxAnswerWithin: for a call that runs as an MCP task,
// whose request was answered already (docs/decisions.md#D17).
func WithWholeBuild(ctx context.Context) context.Context {
	return context.WithValue(ctx, earlyKey{}, true)
}

// wholeBuild reports whether WithWholeBuild marked ctx.
func wholeBuild(ctx context.Context) bool {
	v, _ := ctx.Value(earlyKey{}).(bool)
	return v
}

// safeBuildAnswer is the tool's answer of a safe build's result: its JSON,
// within safebuild.MaxResultJSON, and, when it is not ok, the text that
// leads with its errors and the link of its whole log (docs/safe-build.md#12).
func safeBuildAnswer(res *safebuild.Result) (Result, error) {
	data, err := res.JSON()
	if err != nil {
		return Result{}, err
	}
	out := Result{Data: data, IsError: res.IsError(), LegacyText: string(data)}
	if res.IsError() {
		out.Text = failedText(res)
		out.LegacyText = out.Text
		if res.Output.LogFile != nil {
			out.Links = []Link{logLink(*res.Output.LogFile)}
		}
	}
	return out, nil
}

// MaxFailedText bounds the text content of a failed safe build.
const MaxFailedText = 4 << 10

// failedText is the text of a failed safe build's result: what happened and
// the diagnostics, one a line, then where the whole log is; at most
// MaxFailedText bytes. When no diagnostic names a file (no specific cause,
// or none at all), the last lines of the output follow them, at most
// safebuild.TailLines. Every part but those lines is one line, so the text
// has at most 1+diagnostics.MaxDiagnostics+safebuild.TailLines+6 lines.
func failedText(res *safebuild.Result) string {
	head := fmt.Sprintf("build %q: %s", res.Build, res.Outcome)
	if res.ExitCode != nil {
		head += fmt.Sprintf(" (exit %d)", *res.ExitCode)
	}
	sum := diagnostics.Summary{Diagnostics: res.Diagnostics, Omitted: res.DiagnosticsOmitted,
		Errors: res.Errors, Warnings: res.Warnings, FailedTasks: res.FailedTasks, FailedModules: res.FailedModules}
	if res.Output.LogFile != nil {
		head += ": " + sum.Counts()
	}
	tail := "\n" + cutText(diagnostics.Visible(res.Detail), 1024) + "\n"
	if res.Output.LogFile != nil {
		tail += cutText("The whole log: "+diagnostics.Visible(*res.Output.LogFile), 1024) + "\n"
	}
	head = cutText(head, 512) + "\n"
	room := MaxFailedText - len(head) - len(tail)
	body := sum.Text(room)
	if located(res.Diagnostics) || res.Output.Tail == "" {
		return head + body + tail
	}
	intro := "No compiler or build tool diagnostics were recognised; the output ends:\n"
	if body != "" {
		intro = "The output ends:\n"
	}
	return head + body + lastLines(intro, res.Output.Tail, room-len(body)) + tail
}

// located reports whether a diagnostic of ds names its file: a specific
// cause the text can lead with alone.
func located(ds []diagnostics.Diagnostic) bool {
	for _, d := range ds {
		if d.File != "" {
			return true
		}
	}
	return false
}

// lastLines is intro and the last whole lines of tail, at most
// safebuild.TailLines, that fit in room bytes with it; "" when none fits.
func lastLines(intro, tail string, room int) string {
	tail = strings.TrimRight(tail, "\n")
	keep := room - len(intro) - 1
	if keep <= 0 {
		return ""
	}
	if len(tail) > keep {
		tail = tail[len(tail)-keep:]
		i := strings.IndexByte(tail, '\n')
		if i < 0 {
			return ""
		}
		tail = tail[i+1:]
	}
	for n, i := 0, len(tail); ; n++ {
		if i = strings.LastIndexByte(tail[:i], '\n'); i < 0 {
			break
		}
		if n+1 == safebuild.TailLines {
			tail = tail[i+1:]
			break
		}
	}
	return intro + tail + "\n"
}

// cutText shortens s to at most n bytes on a character boundary.
func cutText(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}

// logLink is the resource link of a build's log.
func logLink(path string) Link {
	l := Link{URI: LogURI(path), Name: filepath.Base(path), Description: "the complete output of the build", MIMEType: "text/plain", Size: -1}
	if fi, err := os.Lstat(path); err == nil {
		l.Size = fi.Size()
	}
	return l
}

// LogURI is the file URI of a build log, as its resource link names it.
func LogURI(path string) string {
	p := filepath.ToSlash(path)
	if !strings.HasPrefix(p, "/") { // C:/p on Windows is file:///C:/p
		p = "/" + p
	}
	return (&url.URL{Scheme: "file", Path: p}).String()
}

// ReadLogURI reads the part of the build log a resource link names
// (docs/safe-build.md#12): only logs beneath a project's .buildguard/logs/,
// never through a link or a second hard link, from the query's offset (0
// without one) on, at most safebuild.MaxLogRead bytes of encoded text.
func ReadLogURI(uri string) (safebuild.LogPart, error) {
	u, err := url.Parse(uri)
	if err != nil || u.Scheme != "file" || (u.Host != "" && u.Host != "localhost") || u.Fragment != "" {
		return safebuild.LogPart{}, fmt.Errorf("%w: %s is not a file URI of a build log", safebuild.ErrNotALog, uri)
	}
	offset, err := logOffset(u.RawQuery)
	if err != nil {
		return safebuild.LogPart{}, err
	}
	p := u.Path
	if len(p) > 2 && p[0] == '/' && p[2] == ':' && filepath.Separator == '\\' { // /C:/p on Windows
		p = p[1:]
	}
	return safebuild.ReadLog(filepath.FromSlash(p), offset)
}

// logOffset is the offset a log URI's query asks for: none, or
// offset=<decimal bytes>.
func logOffset(query string) (int64, error) {
	if query == "" {
		return 0, nil
	}
	digits, ok := strings.CutPrefix(query, "offset=")
	n, err := strconv.ParseInt(digits, 10, 64)
	if !ok || err != nil || n < 0 || digits != strconv.FormatInt(n, 10) {
		return 0, fmt.Errorf("%w: the query %q is not offset=<bytes>", safebuild.ErrLogOffset, query)
	}
	return n, nil
}

// LogPartURI is the URI of a build log's part from offset on.
func LogPartURI(uri string, offset int64) string {
	base, _, _ := strings.Cut(uri, "?")
	if offset == 0 {
		return base
	}
	return base + "?offset=" + strconv.FormatInt(offset, 10)
}

// progressKey carries a call's progress reporter in its context.
type progressKey struct{}

// WithProgress returns a context whose tool call reports its progress to
// report (reclazz_safe_build's output lines, docs/safe-build.md#5). The MCP
// server sets it for a call with a progressToken; the CLI for `build run`.
func WithProgress(ctx context.Context, report func(lines int, message string)) context.Context {
	return context.WithValue(ctx, progressKey{}, report)
}

// queuedKey carries a call's queue reporter in its context.
type queuedKey struct{}

// WithQueueProgress returns a context whose tool call reports where it
// stands while it waits in the project's build queue to report, one
// message each (docs/safe-build.md#5). The MCP server sets it for a call
// with a progressToken; the CLI for `build run`.
func WithQueueProgress(ctx context.Context, report func(message string)) context.Context {
	return context.WithValue(ctx, queuedKey{}, report)
}

// queuedFrom returns the reporter WithQueueProgress set, or nil.
func queuedFrom(ctx context.Context) func(string) {
	if f, ok := ctx.Value(queuedKey{}).(func(string)); ok && f != nil {
		return f
	}
	return nil
}

// progressFrom returns the reporter WithProgress set, or nil.
func progressFrom(ctx context.Context) safebuild.ProgressFunc {
	if f, ok := ctx.Value(progressKey{}).(func(int, string)); ok && f != nil {
		return f
	}
	return nil
}

const safeBuildOutputSchema = `{
  "$schema": "https://json-schema.org/draft/2020-12/schema",
  "type": "object",
  "properties": {
    "outcome": {"type": "string", "enum": ["ok", "failed", "cancelled", "timeout", "refused", "queued-timeout", "running"]},
    "buildId": {"type": "string", "pattern": "^[0-9a-f]{32}$"},
    "exitCode": {"anyOf": [{"type": "integer"}, {"type": "null"}]},
    "errors": {"type": "integer", "minimum": 0},
    "warnings": {"type": "integer", "minimum": 0},
    "diagnosticsOmitted": {"type": "integer", "minimum": 0},
    "diagnostics": {
      "type": "array",
      "maxItems": 50,
      "items": {
        "type": "object",
        "properties": {
          "severity": {"type": "string", "enum": ["error", "warning"]},
          "file": {"type": "string", "maxLength": 512},
          "line": {"type": "integer", "minimum": 1},
          "column": {"type": "integer", "minimum": 1},
          "message": {"type": "string", "maxLength": 512},
          "module": {"type": "string", "maxLength": 256},
          "task": {"type": "string", "maxLength": 256}
        },
        "required": ["severity", "message"],
        "additionalProperties": false
      }
    },
    "failedTasks": {"type": "array", "maxItems": 50, "items": {"type": "string", "maxLength": 256}},
    "failedModules": {"type": "array", "maxItems": 50, "items": {"type": "string", "maxLength": 256}},
    "detail": {"type": "string"},
    "changedClasses": {
      "type": "object",
      "properties": {
        "count": {"type": "integer", "minimum": 0},
        "complete": {"type": "boolean"},
        "allApplied": {"type": "boolean"},
        "classes": {
          "type": "array",
          "maxItems": 64,
          "items": {
            "type": "object",
            "properties": {
              "className": {"type": "string", "maxLength": 256},
              "sha256": {"type": "string"},
              "status": {"type": "string", "enum": ["applied", "running", "failed", "unverified", "mismatch", "not_observed", "unavailable"]},
              "detail": {"type": "string"}
            },
            "required": ["className", "sha256", "status", "detail"],
            "additionalProperties": false
          }
        }
      },
      "required": ["count", "complete", "allApplied", "classes"],
      "additionalProperties": false
    },
    "output": {
      "type": "object",
      "properties": {
        "logFile": {"anyOf": [{"type": "string"}, {"type": "null"}]},
        "lines": {"type": "integer", "minimum": 0},
        "truncated": {"type": "boolean"},
        "tail": {"type": "string", "maxLength": 16384}
      },
      "required": ["logFile", "lines", "truncated", "tail"],
      "additionalProperties": false
    },
    "build": {"type": "string"},
    "command": {"type": "array", "items": {"type": "string"}},
    "durationMs": {"type": "integer", "minimum": 0},
    "owner": {"anyOf": [{"type": "string", "pattern": "^[A-Za-z0-9_-]{1,64}$"}, {"type": "null"}]}
  },
  "required": ["outcome", "exitCode", "errors", "warnings", "diagnosticsOmitted", "diagnostics", "failedTasks", "failedModules", "detail", "changedClasses", "output", "build", "command", "durationMs", "owner"],
  "additionalProperties": false,
  "allOf": [
    {"if": {"properties": {"outcome": {"enum": ["ok", "failed"]}}}, "then": {"properties": {"exitCode": {"type": "integer"}, "owner": {"type": "string"}}}},
    {"if": {"properties": {"outcome": {"const": "ok"}}}, "then": {"properties": {"exitCode": {"const": 0}}}},
    {"if": {"properties": {"outcome": {"const": "refused"}}}, "then": {"properties": {"exitCode": {"const": null}, "changedClasses": {"properties": {"count": {"const": 0}}}}}},
    {"if": {"properties": {"outcome": {"const": "queued-timeout"}}}, "then": {"properties": {"exitCode": {"const": null}, "owner": {"const": null}, "output": {"properties": {"logFile": {"const": null}}}, "changedClasses": {"properties": {"count": {"const": 0}}}}}},
    {"if": {"properties": {"changedClasses": {"properties": {"allApplied": {"const": true}}}}}, "then": {"properties": {"outcome": {"const": "ok"}}}},
    {"if": {"properties": {"outcome": {"const": "running"}}}, "then": {"required": ["buildId"], "properties": {"exitCode": {"const": null}, "owner": {"const": null}, "changedClasses": {"properties": {"count": {"const": 0}}}}}, "else": {"not": {"required": ["buildId"]}}}
  ]
}`
