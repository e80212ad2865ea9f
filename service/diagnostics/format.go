package diagnostics

import (
	"fmt"
	"strconv"
	"strings"
)

// String is the diagnostic in the compilers' own compact form, one line:
// "b/src/main/java/B.java:3:16: error: cannot find symbol; symbol: …", or
// "error: MESSAGE" without a file.
func (d Diagnostic) String() string {
	var b strings.Builder
	if d.File != "" {
		b.WriteString(d.File)
		if d.Line > 0 {
			b.WriteByte(':')
			b.WriteString(strconv.Itoa(d.Line))
			if d.Column > 0 {
				b.WriteByte(':')
				b.WriteString(strconv.Itoa(d.Column))
			}
		}
		b.WriteString(": ")
	}
	b.WriteString(d.Severity)
	b.WriteString(": ")
	b.WriteString(d.Message)
	return b.String()
}

// lineBytes bounds one diagnostic's line in Text.
const lineBytes = 400

// Text is the summary's diagnostics one per line (String, each cut to 400
// bytes), in at most budget bytes including a last line "… and N more" that
// counts those left out (Omitted and those the budget dropped). It is ""
// when there are none.
func (s Summary) Text(budget int) string {
	const reserve = 48 // room for the "more" line
	var b strings.Builder
	shown := 0
	for _, d := range s.Diagnostics {
		line := cut(d.String(), lineBytes)
		if b.Len()+len(line)+1 > budget-reserve {
			break
		}
		b.WriteString(line)
		b.WriteByte('\n')
		shown++
	}
	if more := len(s.Diagnostics) - shown + s.Omitted; more > 0 {
		fmt.Fprintf(&b, "… and %d more\n", more)
	}
	return b.String()
}

// Counts is a short account of the summary: "2 errors, 1 warning", and the
// failed tasks and modules when there are any.
func (s Summary) Counts() string {
	out := plural(s.Errors, "error") + ", " + plural(s.Warnings, "warning")
	if len(s.FailedTasks) > 0 {
		out += "; failed tasks: " + strings.Join(s.FailedTasks, ", ")
	}
	if len(s.FailedModules) > 0 {
		out += "; failed modules: " + strings.Join(s.FailedModules, ", ")
	}
	return out
}

func plural(n int, word string) string {
	if n == 1 {
		return "1 " + word
	}
	return strconv.Itoa(n) + " " + word + "s"
}
