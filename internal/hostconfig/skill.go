package hostconfig

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
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
	return PlanEdit(path, 0o644, "buildguard block", editSkill)
}

func editSkill(old []byte) ([]byte, error) {
	if !utf8.Valid(old) {
		return nil, ErrInvalidUTF8
	}
	begin, end := bytes.Index(old, []byte(SkillBegin)), bytes.Index(old, []byte(SkillEnd))
	nBegin, nEnd := bytes.Count(old, []byte(SkillBegin)), bytes.Count(old, []byte(SkillEnd))
	switch {
	case nBegin == 0 && nEnd == 0:
		out := bytes.Clone(old)
		if len(out) > 0 {
			if !bytes.HasSuffix(out, []byte("\n")) {
				out = append(out, '\n')
			}
			out = append(out, '\n')
		}
		return append(append(out, SkillBlock...), '\n'), nil
	case nBegin == 1 && nEnd == 1 && begin < end:
		return bytes.Join([][]byte{old[:begin], []byte(SkillBlock), old[end+len(SkillEnd):]}, nil), nil
	}
	return nil, fmt.Errorf("%w: it needs exactly one %s followed by one %s", ErrUnsupported, SkillBegin, SkillEnd)
}
