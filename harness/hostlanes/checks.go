//go:build unix

package hostlanes

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
)

// scenarioChecks are the checks of a lane (docs/host-matrix.md#2): the
// host called the safe build and handed the model its result, then the
// scenario's own checks of the last result the model received (after the
// resumes of a running answer, the build's own).
func scenarioChecks(rec *Record, sc Scenario, calls int) []Check {
	called := Check{Name: "result-reached-model", OK: len(rec.Received) >= calls}
	text := ""
	if called.OK {
		called.Detail = fmt.Sprintf("%d tool results in the model's last request", len(rec.Received))
		text = rec.Received[len(rec.Received)-1].Text
	} else {
		called.Detail = fmt.Sprintf("%d tool results reached the model, want %d", len(rec.Received), calls)
	}
	return append([]Check{called}, sc.Checks(rec, text)...)
}

// leadBytes is how far into what the model reads the first error's file
// and line must stand: the start a model reads before anything else.
const leadBytes = 512

// locations are the ways a result names a compiler error's place: javac's
// FILE.java:LINE (also inside a JSON string), and a structured diagnostic's
// "file":"….java","line":LINE (also quoted inside a JSON string).
var locations = []*regexp.Regexp{
	regexp.MustCompile(`([^\s/\\"]+\.java):(\d+)`),
	regexp.MustCompile(`\\?"file\\?":\s*\\?"(?:[^"]*/)?([^"/\\]+\.java)\\?",\s*\\?"line\\?":\s*(\d+)`),
}

// firstLocation is the first place text names, as FILE:LINE, and its byte
// offset; ok is false when it names none.
func firstLocation(text string) (loc string, offset int, ok bool) {
	offset = len(text)
	for _, re := range locations {
		if m := re.FindStringSubmatchIndex(text); m != nil && m[0] < offset {
			loc, offset, ok = text[m[2]:m[3]]+":"+text[m[4]:m[5]], m[0], true
		}
	}
	return loc, offset, ok
}

// firstErrorChecks check that the first place text names is first's, and
// that it stands in the first leadBytes bytes.
func firstErrorChecks(text string, first Diagnostic) []Check {
	named := Check{Name: "names-first-error"}
	leads := Check{Name: "leads-with-first-error"}
	want := first.Location()
	loc, off, ok := firstLocation(text)
	switch {
	case !ok:
		named.Detail = fmt.Sprintf("no FILE.java:LINE in %d bytes: %q", len(text), cut(text, 300))
		leads.Detail = named.Detail
	case loc != want:
		named.Detail = fmt.Sprintf("the first place named is %s at byte %d, want %s", loc, off, want)
		leads.Detail = named.Detail
	default:
		named.OK, named.Detail = true, fmt.Sprintf("%s at byte %d", loc, off)
		leads.OK = off < leadBytes
		leads.Detail = fmt.Sprintf("%s at byte %d of %d, want before byte %d; the result starts %q", loc, off, len(text), leadBytes, cut(text, 120))
	}
	return []Check{named, leads}
}

// cut shortens s to n bytes for a message.
func cut(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}

// nothingLeft finds processes whose command line names the lane's
// directory (a buildguard mcp the host left behind, a build), kills them
// and fails when there were any. Where /proc is missing it says so.
func nothingLeft(dir string) Check {
	c := Check{Name: "nothing-left-running"}
	entries, err := os.ReadDir("/proc")
	if err != nil {
		c.OK, c.Detail = true, "not checked: no /proc"
		return c
	}
	self := os.Getpid()
	var left []string
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid == self {
			continue
		}
		b, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if err != nil || !strings.Contains(string(b), dir) {
			continue
		}
		left = append(left, fmt.Sprintf("%d %s", pid, strings.ReplaceAll(strings.TrimRight(string(b), "\x00"), "\x00", " ")))
		_ = syscall.Kill(pid, syscall.SIGKILL)
	}
	c.OK = len(left) == 0
	c.Detail = "no process names the lane's directory"
	if !c.OK {
		c.Detail = "killed what was left: " + strings.Join(left, "; ")
	}
	return c
}
