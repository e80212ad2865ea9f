package hostconfig

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"time"
)

// A run of `buildguard init` is planned here whole before anything is
// written (docs/hosts.md#1): PlanRun takes the run's Request, Decide says
// which hosts it works on and what each of them gets, PlanChanges reads
// every file and makes its new contents, and Write writes them. `init
// --check` reads what it starts with Checks. The command line only words
// what these return.

// Request is one run of `buildguard init`: what it was asked for, and
// what only the command line knows.
type Request struct {
	// Env is where the run looks for files.
	Env Env
	// Names are the hosts asked for by name; All asks for every host;
	// with neither, claude and every detected host (Select).
	Names []string
	All   bool
	// Entry is what the command line knows of the entries.
	Entry EntryOptions
	// Skill plans the block in the agent instruction files too
	// (SkillFiles).
	Skill bool
}

// Planned is a run of init planned whole, nothing written yet: what the user
// should know, and either why nothing was planned or every file's change
// with why any of them must stay as it is.
type Planned struct {
	// Notes are Decide's, set even with Err.
	Notes []string
	// Err is why the run planned nothing: Decide's error (ErrNoHome,
	// ErrNotOnPath, …).
	Err error
	// Changes are PlanChanges', one per file in the order they were first
	// planned; Errs are why each file that must stay as it is was refused
	// (a *Refusal) or could not be planned. Any of those makes the run
	// write nothing.
	Changes []Change
	Errs    []error
}

// PlanRun decides (Decide) and plans (PlanChanges) the run req asks for;
// it writes nothing. Write writes its Changes.
func PlanRun(req Request) Planned {
	d, err := Decide(req)
	if err != nil {
		return Planned{Notes: d.Notes, Err: err}
	}
	changes, errs := PlanChanges(req.Env, d.Hosts, d.Entries, req.Skill)
	return Planned{Notes: d.Notes, Changes: changes, Errs: errs}
}

// Decision is what a run writes: the hosts, the entry each gets, and what
// the user should know about them.
type Decision struct {
	Hosts   []Host
	Entries map[string]Entry
	Notes   []string
}

// Decide selects the hosts of req (Select) and the entry each gets
// (Entries). Notes are set even with an error.
func Decide(req Request) (Decision, error) {
	hosts, err := Select(req.Env, req.Names, req.All)
	if err != nil {
		return Decision{}, err
	}
	entries, notes, err := Entries(req.Env, hosts, req.Entry)
	return Decision{Hosts: hosts, Entries: entries, Notes: notes}, err
}

// ErrNoHome marks a host whose file is in a home directory that is not
// known.
var ErrNoHome = errors.New("the home directory is not known")

// Select returns the hosts a run works on (docs/decisions.md#D15): those
// named, every one with all, else claude and every detected one. A host
// whose file is in a home directory env does not know is an error
// (ErrNoHome) that says what to set.
func Select(env Env, names []string, all bool) ([]Host, error) {
	var out []Host
	for _, h := range All() {
		switch {
		case len(names) > 0:
			if !slices.Contains(names, h.Name) {
				continue
			}
		case all, h.Name == "claude", h.Detected(env):
		default:
			continue
		}
		if !filepath.IsAbs(h.File(env)) {
			return nil, fmt.Errorf("%w, so %s's file cannot be found; set HOME (for Codex, or CODEX_HOME)", ErrNoHome, h.Title)
		}
		out = append(out, h)
	}
	return out, nil
}

// EntryOptions are what the command line knows of the entries of a run.
type EntryOptions struct {
	// Self is the command that starts this binary: an absolute path.
	Self string
	// Absolute gives the project-level hosts this machine's paths too
	// (init --absolute); they get the portable entry otherwise.
	Absolute bool
	// ToolTimeout is the longest one build call of the project may take
	// (docs/hosts.md#1); TimeoutNote says why it is the default, "" when it
	// is the project's own.
	ToolTimeout time.Duration
	TimeoutNote string
}

// ErrNotOnPath marks a run whose portable entries would not start: no
// buildguard on this process's PATH.
var ErrNotOnPath = errors.New(Command + " is not on PATH")

// Entries returns the entry each host gets (docs/hosts.md#1): a
// project-level host the portable entry, buildguard from PATH, unless
// o.Absolute; a user-level host o.Self and --project-dir. notes are what
// the user should know: a tool timeout that is the default because the
// project's builds could not be read, and a buildguard on PATH that is
// not this binary. A portable entry with no buildguard on PATH would not
// start: ErrNotOnPath, with the notes so far.
func Entries(env Env, hosts []Host, o EntryOptions) (entries map[string]Entry, notes []string, err error) {
	entries = map[string]Entry{}
	why, portable := o.TimeoutNote, false
	for _, h := range hosts {
		e := NewEntry(h, o.Self, env.ProjectDir)
		if h.Scope == Project && !o.Absolute {
			e, portable = PortableEntry(h), true
		}
		entries[h.Name] = e.WithToolTimeout(h, o.ToolTimeout)
		if h.TimeoutKey != "" && why != "" {
			notes, why = append(notes, why), ""
		}
	}
	if !portable {
		return entries, notes, nil
	}
	onPath, err := exec.LookPath(Command)
	if err == nil {
		onPath, err = filepath.Abs(onPath)
	}
	if err != nil {
		return nil, notes, fmt.Errorf("%w: %w", ErrNotOnPath, err)
	}
	a, errA := os.Stat(onPath)
	b, errB := os.Stat(o.Self)
	if errA != nil || errB != nil || !os.SameFile(a, b) {
		notes = append(notes, fmt.Sprintf("the project's entries start buildguard from PATH, which is %s, not this binary (%s)", onPath, o.Self))
	}
	return entries, notes, nil
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
