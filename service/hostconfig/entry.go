package hostconfig

import (
	"errors"
	"fmt"
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

// field is one owned key with its value: a string or a []string.
type field struct {
	key   string
	value any
}

// fields lists the owned keys in the order a new entry has them.
func (e Entry) fields() []field {
	var fs []field
	if e.Type != "" {
		fs = append(fs, field{"type", e.Type})
	}
	fs = append(fs, field{"command", e.Command}, field{"args", e.Args})
	if e.TimeoutKey != "" {
		fs = append(fs, field{e.TimeoutKey, e.Timeout})
	}
	return fs
}

// The refusals of docs/decisions.md#D13. Each leaves the file unchanged; the
// command line turns them into exit 2 with a message that says what to do.
var (
	// ErrInvalidUTF8 marks a file that is not valid UTF-8.
	ErrInvalidUTF8 = errors.New("is not valid UTF-8")
	// ErrSyntax marks a file that does not parse.
	ErrSyntax = errors.New("does not parse")
	// ErrDuplicateKey marks a file in which an object or table names a key twice.
	ErrDuplicateKey = errors.New("has a duplicate key")
	// ErrNotObject marks a file, or a member of it on the way to our entry,
	// that is not an object (a table in TOML).
	ErrNotObject = errors.New("is not an object")
	// ErrUnsupported marks an entry written in a form that cannot be edited
	// in place (for example a TOML inline table or dotted keys).
	ErrUnsupported = errors.New("has a form init cannot edit in place")
	// ErrReadOnly marks a target file without write permission.
	ErrReadOnly = errors.New("is read-only")
	// ErrNotWritable marks a file the user cannot really replace (the
	// file or its directory is not writable for them), or could replace
	// only by taking it from its owner.
	ErrNotWritable = errors.New("cannot be written")
	// ErrWillNotStart marks an existing entry the host would not start as
	// buildguard over stdio whatever command it names (a URL, another
	// transport type, disabled, excluded).
	ErrWillNotStart = errors.New("has a buildguard entry its host would not start")
)

// Refusal is a refused edit: the file stays as it is.
type Refusal struct {
	// Path is the file.
	Path string
	// Err is one of the Err… values above, wrapped with detail.
	Err error
	// Fix says what to do next.
	Fix string
}

func (r *Refusal) Error() string {
	return fmt.Sprintf("%s %v; it was left unchanged. %s", r.Path, r.Err, r.Fix)
}

func (r *Refusal) Unwrap() error { return r.Err }
