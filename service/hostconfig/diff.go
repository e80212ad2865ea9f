package hostconfig

import (
	"bytes"
	"fmt"
	"strings"
)

// Diff returns the change as a unified diff with one hunk, from the first
// changed line to the last with three lines of context, or "" when
// nothing changes: what `init --dry-run` prints.
func (c Change) Diff() string {
	if !c.Changed() {
		return ""
	}
	a, b := lines(c.Old), lines(c.New)
	p := 0
	for p < len(a) && p < len(b) && a[p] == b[p] {
		p++
	}
	s := 0
	for s < len(a)-p && s < len(b)-p && a[len(a)-1-s] == b[len(b)-1-s] {
		s++
	}
	const context = 3
	from := max(p-context, 0)
	toA, toB := min(len(a)-s+context, len(a)), min(len(b)-s+context, len(b))
	var out strings.Builder
	oldName := c.Path
	if !c.Exists {
		oldName = "/dev/null"
	}
	fmt.Fprintf(&out, "--- %s\n+++ %s\n@@ -%s +%s @@\n", oldName, c.Path, span(from, toA-from), span(from, toB-from))
	for _, l := range a[from:p] {
		out.WriteString(" " + l)
	}
	for _, l := range a[p : len(a)-s] {
		out.WriteString("-" + l)
	}
	for _, l := range b[p : len(b)-s] {
		out.WriteString("+" + l)
	}
	for _, l := range a[len(a)-s : toA] {
		out.WriteString(" " + l)
	}
	return out.String()
}

func span(start, n int) string {
	if n == 0 {
		return fmt.Sprintf("%d,0", start)
	}
	return fmt.Sprintf("%d,%d", start+1, n)
}

// lines splits b after each newline; a last line without one gets the
// marker diff(1) prints.
func lines(b []byte) []string {
	var out []string
	for len(b) > 0 {
		k := bytes.IndexByte(b, '\n')
		if k < 0 {
			out = append(out, string(b)+"\n\\ No newline at end of file\n")
			break
		}
		out = append(out, string(b[:k+1]))
		b = b[k+1:]
	}
	return out
}
