package hostconfig

import (
	"errors"
	"fmt"
)

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

// fixFor returns the advice for an edit's refusal, or "" when err is not a
// refusal (a bug, or a broken disk).
func fixFor(err error) string {
	switch {
	case errors.Is(err, ErrInvalidUTF8):
		return "Save it as UTF-8, then run init again."
	case errors.Is(err, ErrDuplicateKey):
		return "Remove the duplicate so that one value is left, then run init again."
	case errors.Is(err, ErrSyntax), errors.Is(err, ErrNotObject):
		return "Fix or move it, then run init again."
	case errors.Is(err, ErrWillNotStart):
		return "Remove those keys from the entry (or give your own server another name), then run init again."
	case errors.Is(err, ErrUnsupported):
		return "Change it as this says, then run init again."
	}
	return ""
}

func trimPath(err error, path string) error {
	msg := err.Error()
	if p := path + " is "; len(msg) > len(p) && msg[:len(p)] == p {
		return fmt.Errorf("is %s", msg[len(p):])
	}
	return err
}
