package cli

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"golang.org/x/term"

	"github.com/buildguard/buildguard/buildguard"
	"github.com/buildguard/buildguard/service/diagnostics"
	"github.com/buildguard/buildguard/service/safebuild"
)

// buildRunAdvice is what `buildguard build run` tells its user after a
// refusal or a timeout, in its flags. Its --timeout-ms bounds the whole
// build, so an agent that answers too late is not fixed by it. A refusal's
// advice covers a missing port file, so that is said once.
var buildRunAdvice = buildguard.Advice{
	buildguard.FixRetry:          "check that the application is running and responsive, and retry",
	buildguard.FixDiscovery:      "the agent writes .reclazz/agent.port in the application's project directory: run buildguard there or pass --project-dir DIR, or pass --port-file PATH or --port N",
	buildguard.FixPortFile:       "point --port-file at the port file the running agent wrote (.reclazz/agent.port in its project), or pass --port N",
	buildguard.FixPort:           "pass --port the agent's port (1 to 65535), or --port-file its port file",
	buildguard.FixStartAgent:     "start the application with the Reclazz agent attached, or point --port/--port-file at its current port",
	buildguard.FixNotAgent:       "what answers on that port is not a Reclazz agent: point --port/--port-file at the agent's current port",
	buildguard.FixAckTimeout:     "the agent did not answer in time: check that the application is responsive, and retry",
	buildguard.FixOwner:          "another build holds the output: it must finish, or a build with the owner it printed must recover it; restart the application if that owner is lost",
	buildguard.FixUpgradeAgent:   "the agent is older than build ownership: attach a Reclazz agent that answers BUILD with owner=, then retry",
	buildguard.FixConfirmProject: "Check DOCTOR workingDirectory and --project-dir.",
	buildguard.FixBuildTime:      "Raise timeoutSeconds in " + safebuild.ConfigFile + " or pass a larger --timeout-ms",
}

// buildScreen is what `buildguard build run` shows on stderr while the build
// runs and after (docs/safe-build.md#10): on a terminal one live status
// line (the build, the time it has run, the latest output line or its place
// in the queue), cleared before the result, and coloured diagnostics unless
// NO_COLOR is set; elsewhere a plain progress line per report and plain
// diagnostics.
type buildScreen struct {
	w      io.Writer
	name   string // the build named on the command line; "" for the default
	tty    bool   // w is a terminal: the status line is redrawn in place
	colour bool
	width  func() int // the terminal's width in columns

	mu      sync.Mutex
	start   time.Time
	latest  string
	shown   bool // a status line is on the screen
	stopped bool
	stop    chan struct{}
	done    chan struct{}
}

// tick is how often the status line's elapsed time is redrawn when the
// build prints nothing.
const tick = 500 * time.Millisecond

func newBuildScreen(w io.Writer, name string) *buildScreen {
	s := &buildScreen{w: w, name: name, start: time.Now(), width: func() int { return 80 }}
	if f, ok := w.(*os.File); ok && term.IsTerminal(int(f.Fd())) {
		s.tty = true
		s.colour = os.Getenv("NO_COLOR") == ""
		fd := int(f.Fd())
		s.width = func() int {
			if cols, _, err := term.GetSize(fd); err == nil && cols > 0 {
				return cols
			}
			return 80
		}
	}
	if s.tty {
		s.stop, s.done = make(chan struct{}), make(chan struct{})
		go s.redraw()
	}
	return s
}

// progress reports the build's output so far (or its place in the queue).
func (s *buildScreen) progress(lines int, message string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.stopped {
		return
	}
	if !s.tty {
		fmt.Fprintf(s.w, "buildguard: build: %d lines: %s\n", lines, diagnostics.Visible(message))
		return
	}
	s.latest = message
	s.drawLocked()
}

// queue reports the build's place in the project's queue.
func (s *buildScreen) queue(message string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.stopped {
		return
	}
	if !s.tty {
		fmt.Fprintf(s.w, "buildguard: queue: %s\n", diagnostics.Visible(message))
		return
	}
	s.latest = message
	s.drawLocked()
}

// redraw keeps the elapsed time current while the build prints nothing.
func (s *buildScreen) redraw() {
	defer close(s.done)
	t := time.NewTicker(tick)
	defer t.Stop()
	for {
		select {
		case <-s.stop:
			return
		case <-t.C:
			s.mu.Lock()
			if !s.stopped {
				s.drawLocked()
			}
			s.mu.Unlock()
		}
	}
}

// drawLocked writes the status line over the one shown, cut to the
// terminal's width so that it never wraps.
func (s *buildScreen) drawLocked() {
	line := "buildguard: building"
	if s.name != "" {
		line += " " + s.name
	}
	line += " · " + time.Since(s.start).Round(time.Second).String()
	if s.latest != "" {
		line += " · " + diagnostics.Visible(s.latest)
	}
	line = cutColumns(line, s.width()-1)
	fmt.Fprintf(s.w, "\r\x1b[2K%s", line)
	s.shown = true
}

// close stops the status line and clears it.
func (s *buildScreen) close() {
	s.mu.Lock()
	if s.stopped {
		s.mu.Unlock()
		return
	}
	s.stopped = true
	if s.shown {
		fmt.Fprint(s.w, "\r\x1b[2K")
	}
	s.mu.Unlock()
	if s.stop != nil {
		close(s.stop)
		<-s.done
	}
}

// buildDiagnostics is the part of a safe build's result the screen shows.
type buildDiagnostics struct {
	Build              string                   `json:"build"`
	Outcome            string                   `json:"outcome"`
	Diagnostics        []diagnostics.Diagnostic `json:"diagnostics"`
	DiagnosticsOmitted int                      `json:"diagnosticsOmitted"`
	Errors             int                      `json:"errors"`
	Warnings           int                      `json:"warnings"`
	FailedTasks        []string                 `json:"failedTasks"`
	FailedModules      []string                 `json:"failedModules"`
}

// result shows the result's diagnostics, one a line in the compilers' own
// form, after a line that counts every one found; nothing when there are
// none. What the build printed is shown without control characters.
func (s *buildScreen) result(data []byte) {
	var r buildDiagnostics
	if json.Unmarshal(data, &r) != nil || (len(r.Diagnostics) == 0 && len(r.FailedTasks) == 0) {
		return
	}
	sum := diagnostics.Summary{Diagnostics: r.Diagnostics, Omitted: r.DiagnosticsOmitted,
		Errors: r.Errors, Warnings: r.Warnings, FailedTasks: visibleAll(r.FailedTasks), FailedModules: visibleAll(r.FailedModules)}
	var b strings.Builder
	fmt.Fprintf(&b, "buildguard: build %q %s: %s\n", r.Build, diagnostics.Visible(r.Outcome), sum.Counts())
	for _, d := range r.Diagnostics {
		b.WriteString("  " + s.paint(d) + "\n")
	}
	if r.DiagnosticsOmitted > 0 {
		fmt.Fprintf(&b, "  … and %d more\n", r.DiagnosticsOmitted)
	}
	io.WriteString(s.w, b.String())
}

// ANSI colours of the diagnostics.
const (
	ansiBold   = "\x1b[1m"
	ansiRed    = "\x1b[31m"
	ansiYellow = "\x1b[33m"
	ansiReset  = "\x1b[0m"
)

// paint is one diagnostic's line, its place bold and its severity red or
// yellow when colours are on. Escape sequences in it are removed and other
// control characters shown as '?'.
func (s *buildScreen) paint(d diagnostics.Diagnostic) string {
	place := ""
	if d.File != "" {
		place = diagnostics.Visible(d.File)
		if d.Line > 0 {
			place += ":" + strconv.Itoa(d.Line)
			if d.Column > 0 {
				place += ":" + strconv.Itoa(d.Column)
			}
		}
		place += ": "
	}
	msg := diagnostics.Visible(d.Message)
	sev := diagnostics.Visible(d.Severity)
	if !s.colour {
		return place + sev + ": " + msg
	}
	colour := ansiRed
	if d.Severity == diagnostics.SeverityWarning {
		colour = ansiYellow
	}
	if place != "" {
		place = ansiBold + place + ansiReset
	}
	return place + colour + ansiBold + sev + ansiReset + ": " + msg
}

// visibleAll is each of names made Visible.
func visibleAll(names []string) []string {
	out := make([]string, len(names))
	for i, n := range names {
		out[i] = diagnostics.Visible(n)
	}
	return out
}

// cutColumns shortens s to at most n characters.
func cutColumns(s string, n int) string {
	if n < 1 {
		return ""
	}
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	i := 0
	for j := range s {
		if i == n-1 {
			return s[:j] + "…"
		}
		i++
	}
	return s
}
