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

// leadLines is how many of the result's first non-empty lines may come
// before the first error's location.
const leadLines = 3

// location is a "FILE.java:LINE" in a text.
var location = regexp.MustCompile(`[^\s/\\"]+\.java:\d+`)

// failingBuildChecks are the failing build's checks (docs/host-matrix.md#2):
// the host called the safe build and handed the model its result, and that
// result leads with the first error's file and line.
func failingBuildChecks(rec *Record, calls int) []Check {
	called := Check{Name: "result-reached-model", OK: len(rec.Received) >= calls}
	if called.OK {
		called.Detail = fmt.Sprintf("%d tool results in the model's last request", len(rec.Received))
	} else {
		called.Detail = fmt.Sprintf("%d tool results reached the model, want %d", len(rec.Received), calls)
		return []Check{called, {Name: "leads-with-first-error", Detail: "no safe build result reached the model"}}
	}
	return []Check{called, leadsWith(rec.Received[calls-1].Text, rec.FirstError)}
}

// leadsWith checks that text names first's FILE:LINE within its first
// leadLines non-empty lines, before any other location.
func leadsWith(text string, first Diagnostic) Check {
	c := Check{Name: "leads-with-first-error"}
	want := first.Location()
	n := 0
	for _, line := range strings.Split(text, "\n") {
		if strings.TrimSpace(line) == "" {
			continue
		}
		if n++; n > leadLines {
			break
		}
		if loc := location.FindString(line); loc != "" {
			c.OK = loc == want
			c.Detail = fmt.Sprintf("line %d names %s, want %s: %q", n, loc, want, line)
			if c.OK {
				c.Detail = fmt.Sprintf("line %d: %q", n, line)
			}
			return c
		}
	}
	c.Detail = fmt.Sprintf("%s is not in the first %d lines of %q", want, leadLines, cut(text, 300))
	return c
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
