package hostconfig

import (
	"bytes"
	"errors"
	"strings"
	"testing"
)

// Markers count only on lines of their own outside code: a README that
// shows them in a fenced block or in inline code keeps every byte, and the
// block is added after it (docs/hosts.md#1).
func TestEditSkillIgnoresMarkersInCode(t *testing.T) {
	t.Parallel()
	for name, doc := range map[string]string{
		"fenced backticks": "# Notes\n\n```markdown\n" + SkillBegin + "\nmy example, keep it\n" + SkillEnd + "\n```\n",
		"fenced tildes":    "~~~~\n" + SkillBegin + "\n~~~\nstill code\n" + SkillEnd + "\n~~~~\nafter\n",
		"inline code":      "Wrap it in `" + SkillBegin + "` and ``" + SkillEnd + "``.\n",
		"indented fence":   "   ```\n" + SkillBegin + "\n   ```\n",
	} {
		t.Run(name, func(t *testing.T) {
			out, notes, err := editSkill([]byte(doc))
			if err != nil {
				t.Fatalf("editSkill = %v", err)
			}
			if !bytes.HasPrefix(out, []byte(doc)) || !bytes.HasSuffix(out, []byte(SkillBlock+"\n")) || len(notes) != 0 {
				t.Errorf("the text was changed, or the block not appended (notes %v):\n%s", notes, out)
			}
			if again, _, err := editSkill(out); err != nil || !bytes.Equal(again, out) {
				t.Errorf("a second run changed the file (%v):\n%s", err, again)
			}
		})
	}
}

// Anything but exactly one well-formed block is refused unchanged, saying
// what is wrong and where.
func TestEditSkillRefusesMalformedBlocks(t *testing.T) {
	t.Parallel()
	block := SkillBegin + "\nold\n" + SkillEnd + "\n"
	for name, c := range map[string]struct{ doc, says string }{
		"two blocks":        {block + "text\n" + block, "line 5 opens a second buildguard block"},
		"two begins":        {SkillBegin + "\n" + block, "line 2 opens a second buildguard block (the first opens on line 1)"},
		"end without begin": {"a\n" + SkillEnd + "\n", "line 2 has " + SkillEnd + " without a " + SkillBegin},
		"two ends":          {block + SkillEnd + "\n", "line 4 has a second " + SkillEnd},
		"begin only":        {"a\n" + SkillBegin + "\nb\n", "opened on line 2 has no " + SkillEnd},
		"end inside a fence": {SkillBegin + "\nmine\n```\n" + SkillEnd + "\n```\n",
			"opened on line 1 has no " + SkillEnd + " line (a marker inside a code block does not count)"},
		"end in an unclosed fence": {SkillBegin + "\n```\n" + SkillEnd + "\n", "has its end marker inside a code block (opened on line 2 and never closed)"},
		"unclosed fence":           {"# a\n```sh\nmake\n", "the code block opened on line 2 is never closed"},
		"marker among text":        {"see " + SkillBegin + " here\n", "line 1 has a buildguard marker among other text"},
		"marker in a quote":        {"> " + SkillBegin + "\n", "line 1 has a buildguard marker among other text"},
	} {
		t.Run(name, func(t *testing.T) {
			out, _, err := editSkill([]byte(c.doc))
			if !errors.Is(err, ErrUnsupported) || !strings.Contains(err.Error(), c.says) || out != nil {
				t.Errorf("editSkill = %v, want a refusal saying %q", err, c.says)
			}
		})
	}
}

// The block is replaced in place; a CRLF file gets a CRLF block, and a
// block that differs from ours (edited by the user) comes with a note.
func TestEditSkillReplacesInPlace(t *testing.T) {
	t.Parallel()
	crlf := func(s string) string { return strings.ReplaceAll(s, "\n", "\r\n") }
	ours := crlf(SkillBlock)
	for name, c := range map[string]struct {
		doc, want string
		note      bool
	}{
		"lf, edited":   {"# A\n\n" + SkillBegin + "\nmy own rule\n" + SkillEnd + "\n\nkeep\n", "# A\n\n" + SkillBlock + "\n\nkeep\n", true},
		"crlf, ours":   {crlf("# A\n\n") + ours + crlf("\nkeep\n"), crlf("# A\n\n") + ours + crlf("\nkeep\n"), false},
		"crlf, edited": {crlf("# A\n" + SkillBegin + "\nx\n" + SkillEnd + "\n"), crlf("# A\n" + SkillBlock + "\n"), true},
		"crlf, new":    {crlf("# A\nkeep\n"), crlf("# A\nkeep\n\n" + SkillBlock + "\n"), false},
		"indented":     {"  " + SkillBegin + "\nx\n" + SkillEnd + "  \n", "  " + SkillBlock + "  \n", true},
	} {
		t.Run(name, func(t *testing.T) {
			out, notes, err := editSkill([]byte(c.doc))
			if err != nil || string(out) != c.want {
				t.Fatalf("editSkill = %v:\n%q\nwant\n%q", err, out, c.want)
			}
			if got := len(notes) == 1 && notes[0] == NoteEditedBlock; got != c.note {
				t.Errorf("notes = %q, want the edited-block note: %v", notes, c.note)
			}
		})
	}
}
