package hostconfig

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/buildguard/buildguard/internal/boundedfile"
)

// Change is the planned edit of one file.
type Change struct {
	// Path is the file as the first edit of it names it; it may be a symlink.
	Path string
	// Target is the file that is written: Path, or where its symlink points.
	Target string
	// Exists reports whether the file exists now.
	Exists bool
	// Old and New are the contents before and after; equal when nothing changes.
	Old, New []byte
	// Mode is the file's permission bits, kept by Write. A new file gets
	// them less the umask.
	Mode fs.FileMode
	// Hosts are the hosts whose entries the file holds: one, or more when
	// two hosts' files are one file (a symlink); none for a skill file.
	Hosts []Host
	// What names each part the change writes, for messages:
	// "mcpServers.buildguard (Claude Code)", "the buildguard block".
	What []string
	// Notes are what the user should know about the change (a replaced
	// block they edited, an entry that served another project).
	Notes []string

	format fileFormat
	info   fs.FileInfo // the target's, when it exists
}

// fileFormat is how a planned file's bytes are read; two edits of one file
// must agree on it.
type fileFormat int

const (
	formatJSON fileFormat = iota
	formatTOML
	formatMarkdown
)

// Changed reports whether the change writes anything.
func (c Change) Changed() bool { return !c.Exists || !bytes.Equal(c.Old, c.New) }

// Describe names what the change writes, joined for a message.
func (c Change) Describe() string { return strings.Join(c.What, " and ") }

// Planner plans every edit of one run before anything is written
// (docs/hosts.md#1): each file is read with the bound of
// docs/decisions.md#D13, edited in memory, and checked — size, format,
// and that the user may really write it. Two edits that reach one file
// (a symlink, a hard link) are made one after the other on the same bytes,
// so neither is lost.
type Planner struct {
	env     Env
	changes []*Change
}

// NewPlanner returns a Planner for env.
func NewPlanner(env Env) *Planner { return &Planner{env: env} }

// Changes returns the planned changes, one per file, in the order the
// files were first planned.
func (p *Planner) Changes() []Change {
	out := make([]Change, len(p.changes))
	for i, c := range p.changes {
		out[i] = *c
	}
	return out
}

// Host plans the edit that puts e into host h's file. A file that must
// stay as it is (docs/decisions.md#D13) is a *Refusal.
func (p *Planner) Host(h Host, e Entry) error {
	mode := fs.FileMode(0o644)
	if h.Scope == User {
		mode = 0o600
	}
	format := formatJSON
	if h.Format == TOML {
		format = formatTOML
	}
	what := fmt.Sprintf("%s (%s)", h.Path(), h.Title)
	c, err := p.plan(h.File(p.env), mode, format, what, h.Path()+" entry", func(old []byte) ([]byte, []string, error) {
		return edit(h, old, e)
	})
	if err == nil {
		c.Hosts = append(c.Hosts, h)
	}
	return err
}

// Skill plans the edit that puts SkillBlock into the Markdown file at path.
func (p *Planner) Skill(path string) error {
	_, err := p.plan(path, 0o644, formatMarkdown, "the buildguard block", "buildguard block", editSkill)
	return err
}

// Plan reads host h's file and returns the change that puts e into it. A
// file that must stay as it is (docs/decisions.md#D13) is a *Refusal;
// nothing is written either way.
func Plan(h Host, env Env, e Entry) (Change, error) {
	p := NewPlanner(env)
	if err := p.Host(h, e); err != nil {
		return Change{}, err
	}
	return p.Changes()[0], nil
}

// editFunc makes the new contents of a file of old (nil when the file does
// not exist) and says what the user should know about it.
type editFunc func(old []byte) (out []byte, notes []string, err error)

// plan adds the edit apply of the file at path to the run, or applies it
// to the change already planned for that file. what names the edit in
// messages; part names it in a refusal's advice. It looks at the file
// first (its link, whether it exists, which planned change it is, whether
// the user may replace it), reads it last, and then edits it.
func (p *Planner) plan(path string, mode fs.FileMode, format fileFormat, what, part string, apply editFunc) (*Change, error) {
	c := &Change{Path: path, Target: path, Mode: mode, format: format}
	refuse := func(err error, fix string) (*Change, error) {
		return nil, &Refusal{Path: path, Err: err, Fix: fix}
	}
	if fi, err := os.Lstat(path); err == nil && fi.Mode()&fs.ModeSymlink != 0 {
		target, err := filepath.EvalSymlinks(path)
		if err != nil {
			return refuse(fmt.Errorf("is a symlink that does not resolve: %w", err), "Point the link at a file (or remove it), then run init again.")
		}
		c.Target = target
	}
	fi, statErr := os.Stat(c.Target)
	missing := errors.Is(statErr, fs.ErrNotExist) || errors.Is(statErr, syscall.ENOTDIR) || errors.Is(statErr, syscall.ELOOP)
	switch {
	case missing:
		if err := creatable(c.Target); err != nil {
			return refuse(err, "Make that a folder (or a symlink to one), then run init again.")
		}
	case statErr == nil && fi.Mode().IsRegular():
		c.info = fi
	}
	var old []byte
	same := p.sameFile(c)
	switch {
	case same != nil && same.format != format:
		return refuse(fmt.Errorf("is the same file as %s, which init edits as another format", same.Path), "Make them two files, then run init again.")
	case same != nil:
		c, old = same, same.New
	}
	denied := p.replaceable(c, path, part)
	if same == nil && !missing {
		var err error
		old, err = boundedfile.ReadFile(c.Target, boundedfile.ConfigLimit)
		switch {
		case errors.Is(err, boundedfile.ErrNotRegular), errors.Is(err, boundedfile.ErrTooLarge):
			return refuse(trimPath(err, c.Target), "Replace it with a regular file (a symlink to one is fine), then run init again.")
		case err == nil && c.info == nil: // it became a file since the Stat
			c.info, err = os.Stat(c.Target)
		}
		if err != nil {
			return nil, fmt.Errorf("reading %s: %w", path, err)
		}
		c.Exists, c.Old, c.Mode = true, old, c.info.Mode().Perm()
	}
	out, notes, err := apply(old)
	if err != nil {
		if fix := fixFor(err); fix != "" {
			return refuse(err, fix)
		}
		return nil, err
	}
	if int64(len(out)) > boundedfile.ConfigLimit {
		return refuse(fmt.Errorf("would be larger than the limit of %d MiB with the %s (%d bytes); init reads no file that large", boundedfile.ConfigLimit>>20, part, len(out)), "Make the file smaller, then run init again.")
	}
	if denied != nil && (!bytes.Equal(out, c.Old) || !c.Exists) {
		return nil, denied
	}
	c.New = out
	c.What = append(c.What, what)
	c.Notes = append(c.Notes, notes...)
	if len(c.What) == 1 {
		p.changes = append(p.changes, c)
	}
	return c, nil
}

// replaceable returns the refusal of c's file, named path, should the run
// change it, or nil: a file with other names (hard links), which the
// rename of Write would part from it, or one the user may not replace
// (writable). part names the edit in the advice.
func (p *Planner) replaceable(c *Change, path, part string) error {
	if n := linkCount(c.info); n > 1 {
		return &Refusal{Path: path, Err: fmt.Errorf("%w: it is one file with %d names (hard links), and init writes a new file and renames it over this name, so the other names would keep the old content", ErrNotWritable, n),
			Fix: fmt.Sprintf("Make the other names symlinks to it (ln -sf), or add the %s yourself.", part)}
	}
	err := p.writable(c)
	switch {
	case err == nil:
		return nil
	case errors.Is(err, ErrReadOnly):
		return &Refusal{Path: path, Err: err, Fix: fmt.Sprintf("Make it writable (chmod u+w %s) and run init again, or leave it read-only and add the %s yourself.", path, part)}
	}
	return &Refusal{Path: path, Err: err, Fix: fmt.Sprintf("Run init as the user who owns it, or add the %s yourself.", part)}
}

// creatable checks the folders on the way to target, a file that does not
// exist, as Write creates them: the nearest one that exists must be a
// directory (a symlink to one is fine), reached without an error, so that
// a write the plan promises cannot fail on a dangling link or a file in the
// way.
func creatable(target string) error {
	for dir := filepath.Dir(target); ; dir = filepath.Dir(dir) {
		fi, err := os.Lstat(dir)
		if errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ENOTDIR) || errors.Is(err, syscall.ELOOP) {
			if filepath.Dir(dir) == dir {
				return fmt.Errorf("%w: %w", ErrNotWritable, err)
			}
			continue
		}
		if err != nil {
			return fmt.Errorf("%w: %w", ErrNotWritable, err)
		}
		if fi.Mode()&fs.ModeSymlink != 0 {
			if fi, err = os.Stat(dir); err != nil {
				return fmt.Errorf("%w: its folder %s is a symlink that does not resolve (%w)", ErrNotWritable, dir, err)
			}
		}
		if !fi.IsDir() {
			return fmt.Errorf("%w: %s, on the way to it, is not a folder", ErrNotWritable, dir)
		}
		return nil
	}
}

// sameFile returns the planned change of the file c reaches, or nil: the
// same existing file (however it is named), or the same path to be created.
func (p *Planner) sameFile(c *Change) *Change {
	for _, d := range p.changes {
		switch {
		case c.info != nil && d.info != nil && os.SameFile(c.info, d.info):
			return d
		case c.info == nil && d.info == nil && resolvedPath(c.Target) == resolvedPath(d.Target):
			return d
		}
	}
	return nil
}

// resolvedPath is path with the symlinks of its directory resolved, as far
// as the directory exists.
func resolvedPath(path string) string {
	dir, base := filepath.Split(filepath.Clean(path))
	if r, err := filepath.EvalSymlinks(dir); err == nil {
		return filepath.Join(r, base)
	}
	if dir == path || dir == "" {
		return filepath.Clean(path)
	}
	return filepath.Join(resolvedPath(filepath.Clean(dir)), base)
}

// PlanChanges plans every file of a run: each host's entries[h.Name] and,
// with skill, the block in the agent instruction files (SkillFiles). It
// returns the changes, one per file in the order they were first planned,
// and why each file that must stay as it is was refused (a *Refusal) or
// could not be planned; any of those makes the run write nothing.
func PlanChanges(env Env, hosts []Host, entries map[string]Entry, skill bool) ([]Change, []error) {
	p := NewPlanner(env)
	var errs []error
	for _, h := range hosts {
		if err := p.Host(h, entries[h.Name]); err != nil {
			errs = append(errs, err)
		}
	}
	if skill {
		for _, f := range SkillFiles(env.ProjectDir) {
			if err := p.Skill(f); err != nil {
				errs = append(errs, err)
			}
		}
	}
	return p.Changes(), errs
}
