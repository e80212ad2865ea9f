// Package stateignore gives buildguard's state directory (a project's
// .buildguard/) a .gitignore holding "*", so that the directory ignores
// itself as tools' caches do and never shows in the user's git status
// (docs/safe-build.md#9).
//
// It writes only a file of its own, new, complete or not at all, never
// through a link and never over a file that exists; it removes nothing but
// its own temporary file. It does not decide when to write: its callers
// call it when they have just created the state directory.
package stateignore

import "errors"

// Name is the file's name in the state directory.
const Name = ".gitignore"

// Content is what the file holds: every name in the directory, the file
// itself included, is ignored.
const Content = "*\n"

// ErrNotADir means the state directory given to Create is a link or not a
// directory; nothing was written.
var ErrNotADir = errors.New("not a directory of its own")
