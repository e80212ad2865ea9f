package buildqueue

import (
	"errors"
	"io/fs"
	"os"

	"github.com/buildguard/buildguard/internal/stateignore"
)

// ensureStateDir is ensureDir of the project's state directory: a
// directory that was missing before this call is given its .gitignore
// (stateignore.Create, which writes nothing over an existing file), so the
// queue never shows in the user's git status (docs/safe-build.md#9). A
// .gitignore that could not be written is no error of the build.
func ensureStateDir(state string) error {
	_, err := os.Lstat(state)
	missing := errors.Is(err, fs.ErrNotExist)
	if err := ensureDir(state, 0o755); err != nil {
		return err
	}
	if missing {
		_ = stateignore.Create(state)
	}
	return nil
}
