package hostconfig

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"unicode/utf8"
)

// The markers around the skill block (docs/decisions.md#D15).
const (
	SkillBegin = "<!-- buildguard:begin -->"
	SkillEnd   = "<!-- buildguard:end -->"
)

// SkillBlock teaches a coding agent the safe loop, between the markers.
const SkillBlock = SkillBegin + `
## Building with buildguard

The running JVM reloads every class file a build writes; buildguard lets only complete, successful builds through.

- Build only through ` + "`buildguard -- <build command>`" + ` (for example ` + "`buildguard -- ./gradlew classes`" + `) or the ` + "`reclazz_safe_build`" + ` MCP tool, never the bare build.
- Never copy, move or edit class files in the build's output directories by hand.
- A failed build stays held: fix it and build again with the owner token buildguard printed, ` + "`buildguard --owner TOKEN -- <build command>`" + `.
- Prove what the JVM runs with ` + "`reclazz_verify`" + ` (or ` + "`buildguard verify CLASS --class-file FILE`" + `): it compares the bytes by SHA-256.
` + SkillEnd

// SkillFiles returns the files --skill writes in dir: AGENTS.md always,
// CLAUDE.md and GEMINI.md where they exist.
func SkillFiles(dir string) []string {
	files := []string{filepath.Join(dir, "AGENTS.md")}
	for _, name := range []string{"CLAUDE.md", "GEMINI.md"} {
		p := filepath.Join(dir, name)
		if _, err := os.Lstat(p); err == nil {
			files = append(files, p)
		}
	}
	return files
}

// PlanSkill returns the change that puts SkillBlock into the Markdown file
// at path: the block between the markers is replaced in place, or appended
// when there is none; every other byte stays.
func PlanSkill(path string) (Change, error) {
	p := NewPlanner(Env{})
	if err := p.Skill(path); err != nil {
		return Change{}, err
	}
	return p.Changes()[0], nil
}

// NoteEditedBlock is the note of a skill change that replaces a block whose
// text differs from SkillBlock: edited by hand, or by another version.
const NoteEditedBlock = "the buildguard block there differs from the one init writes (edited by hand, or written by another version of buildguard); init replaces it, so move any text of your own out from between the markers first"

// editSkill puts SkillBlock into the Markdown document old. Markers count
// only on a line of their own (up to three spaces of indentation) outside
// fenced code blocks; a marker in inline code or a code block is text. The
// block is replaced when old has exactly one begin line followed by one
// end line, appended when it has none; anything else is refused unchanged
// (ErrUnsupported, saying why). Added lines end as old's lines do.
func editSkill(old []byte) ([]byte, []string, error) {
	if !utf8.Valid(old) {
		return nil, nil, ErrInvalidUTF8
	}
	nl := lineEnding(old)
	block := []byte(strings.ReplaceAll(SkillBlock, "\n", nl))
	s, err := scanMarkdown(old)
	if err != nil {
		return nil, nil, fmt.Errorf("%w: %v", ErrUnsupported, err)
	}
	if s.begin < 0 {
		out := bytes.Clone(old)
		if len(out) > 0 {
			if !bytes.HasSuffix(out, []byte("\n")) {
				out = append(out, nl...)
			}
			out = append(out, nl...)
		}
		return append(append(out, block...), nl...), nil, nil
	}
	current := old[s.begin:s.end]
	var notes []string
	if string(bytes.ReplaceAll(current, []byte("\r\n"), []byte("\n"))) != SkillBlock {
		notes = append(notes, NoteEditedBlock)
	}
	return bytes.Join([][]byte{old[:s.begin], block, old[s.end:]}, nil), notes, nil
}

// lineEnding is the line ending of most of b's lines: "\r\n" or "\n".
func lineEnding(b []byte) string {
	crlf := bytes.Count(b, []byte("\r\n"))
	if crlf > 0 && crlf >= bytes.Count(b, []byte("\n"))-crlf {
		return "\r\n"
	}
	return "\n"
}

// markdownScan is where the block stands in a Markdown document: begin is
// the offset of its begin marker, end the offset just after its end marker
// (before that line's ending); begin is -1 when there is no block.
type markdownScan struct{ begin, end int }

// scanMarkdown finds the one block of b, or says why there is not exactly
// one well-formed block.
func scanMarkdown(b []byte) (markdownScan, error) {
	s := markdownScan{begin: -1, end: -1}
	var fence string // the open fence's marker run ("```", "~~~~"), empty outside one
	fenceLine, beginLine := 0, 0
	for n, off := 1, 0; off < len(b); n++ {
		line := b[off:]
		if k := bytes.IndexByte(line, '\n'); k >= 0 {
			line = line[:k+1]
		}
		start := off
		off += len(line)
		text := strings.TrimRight(string(line), "\r\n")
		if fence != "" {
			if closesFence(text, fence) {
				fence = ""
			}
			continue
		}
		if f := opensFence(text); f != "" {
			fence, fenceLine = f, n
			continue
		}
		switch marker := markerLine(text); {
		case marker == SkillBegin && s.begin >= 0:
			return s, fmt.Errorf("line %d opens a second buildguard block (the first opens on line %d); keep one %s … %s block", n, beginLine, SkillBegin, SkillEnd)
		case marker == SkillBegin && s.end >= 0:
			return s, fmt.Errorf("line %d opens a second buildguard block; keep one %s … %s block", n, SkillBegin, SkillEnd)
		case marker == SkillBegin:
			s.begin, beginLine = start+strings.Index(text, SkillBegin), n
		case marker == SkillEnd && s.begin < 0:
			return s, fmt.Errorf("line %d has %s without a %s line before it", n, SkillEnd, SkillBegin)
		case marker == SkillEnd && s.end >= 0:
			return s, fmt.Errorf("line %d has a second %s", n, SkillEnd)
		case marker == SkillEnd:
			s.end = start + strings.Index(text, SkillEnd) + len(SkillEnd)
		case marker == "" && hasMarker(withoutInlineCode(text)):
			return s, fmt.Errorf("line %d has a buildguard marker among other text; a marker must stand on a line of its own (or in `code` when it is only mentioned)", n)
		}
	}
	switch {
	case fence != "" && s.begin >= 0 && s.end < 0:
		return s, fmt.Errorf("the buildguard block opened on line %d has its end marker inside a code block (opened on line %d and never closed)", beginLine, fenceLine)
	case fence != "":
		return s, fmt.Errorf("the code block opened on line %d is never closed, so a block added at the end would be code; close it with %s", fenceLine, fence)
	case s.begin >= 0 && s.end < 0:
		return s, fmt.Errorf("the buildguard block opened on line %d has no %s line (a marker inside a code block does not count)", beginLine, SkillEnd)
	}
	return s, nil
}

// markerLine returns the marker that is all of line, besides up to three
// spaces of indentation and trailing blanks, or "".
func markerLine(line string) string {
	t := strings.TrimRight(line, " \t")
	if indent := len(t) - len(strings.TrimLeft(t, " ")); indent > 3 {
		return ""
	}
	switch t = strings.TrimLeft(t, " "); t {
	case SkillBegin, SkillEnd:
		return t
	}
	return ""
}

func hasMarker(s string) bool {
	return strings.Contains(s, SkillBegin) || strings.Contains(s, SkillEnd)
}

// opensFence returns the marker run of a fenced code block's opening line
// (CommonMark: up to three spaces, then at least three backticks or
// tildes; a backtick fence's info string has no backtick), or "".
func opensFence(line string) string {
	t := strings.TrimLeft(line, " ")
	if len(line)-len(t) > 3 || len(t) < 3 || (t[0] != '`' && t[0] != '~') {
		return ""
	}
	n := len(t) - len(strings.TrimLeft(t, t[:1]))
	if n < 3 || (t[0] == '`' && strings.Contains(t[n:], "`")) {
		return ""
	}
	return t[:n]
}

// closesFence reports whether line closes the fence opened with run: the
// same character, at least as many, nothing but blanks after.
func closesFence(line, run string) bool {
	t := strings.TrimLeft(line, " ")
	if len(line)-len(t) > 3 {
		return false
	}
	n := len(t) - len(strings.TrimLeft(t, run[:1]))
	return n >= len(run) && strings.TrimRight(t[n:], " \t") == ""
}

// withoutInlineCode returns line with its code spans (a run of backticks up
// to the next run of the same length) cut out.
func withoutInlineCode(line string) string {
	var out strings.Builder
	for {
		i := strings.IndexByte(line, '`')
		if i < 0 {
			return out.String() + line
		}
		out.WriteString(line[:i])
		n := len(line[i:]) - len(strings.TrimLeft(line[i:], "`"))
		run, rest := line[i:i+n], line[i+n:]
		closed := false
		for j := 0; j < len(rest); {
			k := strings.Index(rest[j:], run)
			if k < 0 {
				break
			}
			m := len(rest[j+k:]) - len(strings.TrimLeft(rest[j+k:], "`"))
			if m == n {
				line, closed = rest[j+k+m:], true
				break
			}
			j += k + m
		}
		if !closed {
			return out.String() + rest // an unmatched run is text; what follows it is not code
		}
	}
}
