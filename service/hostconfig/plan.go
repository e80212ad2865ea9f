package hostconfig

import "time"

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
	// AnswerWithin, when set, is written into every entry's args as
	// `--answer-within DURATION` (init --answer-within, docs/hosts.md#1).
	AnswerWithin time.Duration
}
