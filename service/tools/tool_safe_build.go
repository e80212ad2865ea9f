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
			"Send a progressToken for progress; cancellable through notifications/cancelled. Use reclazz_build only for a build you must run yourself.",
		inputSchema: func() agentproto.Object {
			return inputSchema("Time limit of the whole build in milliseconds, as an integer string, 1-60000. Default 600000 (10 minutes), or the build's timeoutSeconds from .buildguard.json.", object(
				"build", object("type", "string", "maxLength", 64, "pattern", safeBuildNamePattern, "description", "Name of a build configured in .buildguard.json (or gradle/maven when detected). Default: its defaultBuild."),
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

// checkSafeBuild selects the build, touching no agent.
func checkSafeBuild(c *toolCall) error {
	_, err := selectBuild(c)
	return err
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
	return safeBuildAnswer(c.deps.builder.Run(ctx, req))
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
    "outcome": {"type": "string", "enum": ["ok", "failed", "cancelled", "timeout", "refused", "queued-timeout"]},
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
    {"if": {"properties": {"changedClasses": {"properties": {"allApplied": {"const": true}}}}}, "then": {"properties": {"outcome": {"const": "ok"}}}}
  ]
}`
