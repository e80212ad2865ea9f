package hostconfig

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"time"
)

// Entry is what buildguard owns in its entry: the command and its
// arguments, the type where the host needs one, and the tool timeout where
// the host has one (docs/hosts.md#1). Every other key of the entry (env,
// cwd, a type the host does not need, …) belongs to the user.
type Entry struct {
	// Command is the buildguard binary: "buildguard", found on PATH, or an
	// absolute path.
	Command string
	// Args are the server's arguments: mcp, with --project-dir where the
	// host does not start the server in the project.
	Args []string
	// Type is the transport type the host needs ("stdio" for VS Code), or
	// empty.
	Type string
	// TimeoutKey is the key of the host's tool timeout (Host.TimeoutKey),
	// empty when the entry sets none; Timeout is its value in the host's
	// unit. A larger value the user wrote is kept (see edit).
	TimeoutKey string
	Timeout    int64
}

// Command is the command a portable entry names: buildguard as found on
// the PATH of whoever starts the host (docs/hosts.md#1).
const Command = "buildguard"

// NewEntry returns the entry that starts `binary mcp --project-dir dir`
// for host h: this machine's paths, for a user-level file or on request
// (init --absolute).
func NewEntry(h Host, binary, dir string) Entry {
	return Entry{Command: binary, Args: []string{"mcp", "--project-dir", dir}, Type: h.Type}
}

// PortableEntry returns the entry of a project-level host that a team can
// commit (docs/hosts.md#1): buildguard from PATH, and the project as the
// host names it, by the directory it starts the server in (Claude Code,
// Gemini CLI) or by its ${workspaceFolder} (VS Code, Cursor). A user-level
// host has no portable entry: it gets NewEntry's.
func PortableEntry(h Host) Entry {
	args := []string{"mcp"}
	if h.WorkspaceVar != "" {
		args = append(args, "--project-dir", h.WorkspaceVar)
	}
	return Entry{Command: Command, Args: args, Type: h.Type}
}

// WithToolTimeout returns e with host h's tool timeout set to at least d,
// rounded up to the host's unit; e itself when h has no such setting.
func (e Entry) WithToolTimeout(h Host, d time.Duration) Entry {
	if h.TimeoutKey == "" || d <= 0 {
		return e
	}
	e.TimeoutKey = h.TimeoutKey
	e.Timeout = int64((d + h.TimeoutUnit - 1) / h.TimeoutUnit)
	return e
}

// WithAnswerWithin returns e with `--answer-within d` at the end of its
// args (docs/hosts.md#1); e itself when d is zero. d is written in whole
// seconds when it is some ("100s", not "1m40s"), else as Go prints it.
func (e Entry) WithAnswerWithin(d time.Duration) Entry {
	if d <= 0 {
		return e
	}
	v := d.String()
	if d%time.Second == 0 {
		v = strconv.FormatInt(int64(d/time.Second), 10) + "s"
	}
	e.Args = append(slices.Clip(e.Args), "--answer-within", v)
	return e
}

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
		entries[h.Name] = e.WithToolTimeout(h, o.ToolTimeout).WithAnswerWithin(o.AnswerWithin)
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

// ErrNotOnPath marks a run whose portable entries would not start: no
// buildguard on this process's PATH.
var ErrNotOnPath = errors.New(Command + " is not on PATH")
