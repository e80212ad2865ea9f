package safebuild

import (
	"encoding/json"
	"strconv"
	"strings"
	"unicode/utf8"
)

// Bounds of a result's JSON (docs/safe-build.md#7): what a host that shows
// only the structured result hands its model must fit what the smallest
// host we configure keeps of a tool result (docs/hosts.md#9).
const (
	// MaxResultJSON is the most bytes a result takes as compact JSON, HTML
	// characters escaped (its longest form), when its log's path takes at
	// most 5 KiB of it: the 10 KiB Codex keeps of a tool result, less 256
	// bytes for the line it puts before the JSON.
	MaxResultJSON = 10<<10 - 256
	// maxNamesShare, maxDetailShare and maxCommandShare are the most bytes
	// of JSON the failed tasks and modules, detail and command keep in a
	// result that the tail alone does not bring within MaxResultJSON.
	maxNamesShare   = 1 << 10
	maxDetailShare  = 2 << 10
	maxCommandShare = 1 << 10
)

// fit is r within MaxResultJSON: the tail cut from its start to its last
// whole lines that fit; then the failed tasks and modules, detail and
// command cut to their shares; then the listed diagnostics from the end,
// counted in DiagnosticsOmitted, down to those within diagnosticsFloor;
// then the listed changed classes from the end (Count stays); then the
// rest of the diagnostics. The log's path is never cut, so the rest can be
// read. r itself is not changed.
func (r *Result) fit() Result {
	c := *r
	over := jsonLen(&c) - MaxResultJSON
	if over <= 0 {
		return c
	}
	if c.Output.Tail != "" {
		keep := lastLinesWithin(c.Output.Tail, stringJSONLen(c.Output.Tail)-over)
		c.Output.Truncated = c.Output.Truncated || keep != c.Output.Tail
		c.Output.Tail = keep
		if over = jsonLen(&c) - MaxResultJSON; over <= 0 {
			return c
		}
	}
	var room int
	c.FailedTasks, room = fitNames(c.FailedTasks, maxNamesShare/2)
	c.FailedModules, _ = fitNames(c.FailedModules, maxNamesShare/2+room)
	c.Detail = cutJSON(c.Detail, maxDetailShare)
	c.Command = fitCommand(c.Command, maxCommandShare)
	for _, floor := range []int{diagnosticsFloor, 0} {
		// Each round drops from the end as many as the excess needs, then
		// measures again (a count may have grown a digit).
		for over = jsonLen(&c) - MaxResultJSON; over > 0; over = jsonLen(&c) - MaxResultJSON {
			keep := dropFromEnd(c.Diagnostics, over, floor)
			if keep == len(c.Diagnostics) {
				break
			}
			c.DiagnosticsOmitted += len(c.Diagnostics) - keep
			c.Diagnostics = c.Diagnostics[:keep:keep]
		}
		for ; over > 0; over = jsonLen(&c) - MaxResultJSON {
			keep := dropFromEnd(c.ChangedClasses.Classes, over, 0)
			if keep == len(c.ChangedClasses.Classes) {
				break
			}
			c.ChangedClasses.Classes = c.ChangedClasses.Classes[:keep:keep]
		}
	}
	return c
}

// diagnosticsFloor is the JSON of the first diagnostics a result keeps
// before its listed changed classes are cut.
const diagnosticsFloor = 4 << 10

// dropFromEnd is how many of the first items of list to keep so that about
// over bytes of JSON go, keeping the first ones that take floor bytes.
func dropFromEnd[T any](list []T, over, floor int) int {
	keep, size := len(list), jsonLen(list)
	for keep > 0 && over > 0 {
		k := jsonLen(list[keep-1]) + 1
		if size-k < floor {
			break
		}
		keep, size, over = keep-1, size-k, over-k
	}
	return keep
}

// lastLinesWithin is the last whole lines of tail whose JSON string takes
// at most room bytes; "" when not even the last line fits.
func lastLinesWithin(tail string, room int) string {
	used, start := 2, len(tail) // the quotes
	for start > 0 {
		// The line that ends at start (its newline included, or the last
		// line without one) begins after the newline before it.
		i := strings.LastIndexByte(tail[:start-1], '\n') + 1
		n := stringJSONLen(tail[i:start]) - 2
		if used+n > room {
			break
		}
		used, start = used+n, i
	}
	return tail[start:]
}

// fitNames is the first of names that fit in room bytes of JSON, and what
// is left of room.
func fitNames(names []string, room int) ([]string, int) {
	var list []string
	for _, n := range names {
		k := stringJSONLen(n) + 1
		if k > room {
			break
		}
		list, room = append(list, n), room-k
	}
	if list == nil {
		list = []string{}
	}
	return list, room
}

// cutJSON is s, or its start and "…" when its JSON string would take more
// than most bytes.
func cutJSON(s string, most int) string {
	if stringJSONLen(s) <= most {
		return s
	}
	used, end := 2+len("…"), 0
	for i, ch := range s {
		k := runeJSONLen(ch, s[i:])
		if used+k > most {
			break
		}
		used, end = used+k, i+utf8.RuneLen(ch)
	}
	return s[:end] + "…"
}

// fitCommand is command within most bytes of JSON: its first arguments, the
// last of them cut, then "… and N more" counting those left out.
func fitCommand(command []string, most int) []string {
	const note = 32 // room for "… and N more"
	used := 2
	for i, arg := range command {
		k := stringJSONLen(arg) + 1
		if used+k <= most-note || (i == len(command)-1 && used+k <= most) {
			used += k
			continue
		}
		out := append([]string(nil), command[:i]...)
		out = append(out, cutJSON(arg, max(most-note-used-1, 3+len("…"))))
		if more := len(command) - i - 1; more > 0 {
			out = append(out, "… and "+strconv.Itoa(more)+" more")
		}
		return out
	}
	return command
}

// jsonLen is the length of v as compact JSON with HTML characters escaped.
func jsonLen(v any) int {
	b, err := json.Marshal(v)
	if err != nil {
		return 0
	}
	return len(b)
}

// stringJSONLen is the length of s as a JSON string, quotes included, in
// its longest form: HTML characters, U+2028, U+2029 and invalid bytes
// escaped as \uXXXX.
func stringJSONLen(s string) int {
	n := 2
	for i, ch := range s {
		n += runeJSONLen(ch, s[i:])
	}
	return n
}

// runeJSONLen is the length in a JSON string, at most, of the rune ch that
// starts rest.
func runeJSONLen(ch rune, rest string) int {
	switch {
	case ch == utf8.RuneError:
		if _, size := utf8.DecodeRuneInString(rest); size == 1 {
			return len(`\ufffd`)
		}
		return utf8.RuneLen(ch)
	case ch == '"' || ch == '\\' || ch == '\n' || ch == '\r' || ch == '\t':
		return 2
	case ch < 0x20 || ch == '<' || ch == '>' || ch == '&' || ch == '\u2028' || ch == '\u2029':
		return len(`\u0000`)
	}
	return utf8.RuneLen(ch)
}
