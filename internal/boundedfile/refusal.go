package boundedfile

// Problem is why a file was refused.
type Problem int

// The problems of a refused file.
const (
	// Unreadable: the file cannot be read, or looked at.
	Unreadable Problem = iota + 1
	// NotPrivate: others than its owner may read or write it.
	NotPrivate
	// Malformed: it holds no token of the form asked for.
	Malformed
	// NotOwnable: something other than a regular file stands at the
	// path (a symlink, a directory, a named pipe, a device, a socket), and
	// a file of its own is never written in its place.
	NotOwnable
)

// Refusal is a token file or URL file refused: its Problem, and what was
// found, with the file's path, as its text. Each front words it in the
// names its users give the file.
type Refusal struct {
	Problem Problem
	text    string
}

func (e *Refusal) Error() string { return e.text }
