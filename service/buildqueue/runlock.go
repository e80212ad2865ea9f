package buildqueue

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/buildguard/buildguard/internal/filelock"
)

// runName is the file of the run lock where the project's root directory
// cannot be locked itself (Windows, a file system that locks no
// directory).
const runName = "run"

// The run lock is what excludes a second build of a project: the build that
// holds the project's turn keeps an exclusive lock on the project's root
// directory from its turn to its Release, and a build may start only with
// that lock (docs/safe-build.md#4). The tickets order the builds and say
// who waits for whom; the run lock makes the promise of one build at a
// time hold even when a hand removes a ticket, the queue's directory or
// all of .buildguard under a running build: a root directory is not
// removed under a running build. Where a directory cannot be locked, the
// lock is on ROOT/.buildguard/run instead, opened so that on Windows
// neither it nor .buildguard can be removed while it is held.

// runLock is the run lock of one project.
type runLock struct {
	root    string
	viaFile bool // the root directory could not be locked: the lock is file()
}

// take takes the run lock without waiting: the locked file (close it to
// release), filelock.ErrWouldBlock while another build holds it, or an
// ErrUnusable error.
func (r *runLock) take() (*os.File, error) {
	if !r.viaFile {
		d, err := filelock.OpenDir(r.root)
		switch {
		case err == nil:
			err = filelock.TryLock(d)
			if err == nil {
				return d, nil
			}
			d.Close()
			switch {
			case errors.Is(err, filelock.ErrWouldBlock):
				return nil, err
			case !errors.Is(err, filelock.ErrNoDirLock):
				// Not a file system without directory locks: the file
				// would not exclude a build that holds the directory's.
				return nil, fmt.Errorf("%w: locking the project's root directory: %w", ErrUnusable, err)
			}
		case !errors.Is(err, filelock.ErrNoDirLock):
			// The system locks directories, but this user cannot open
			// this one: another build may hold its lock, so the file
			// would not exclude it.
			return nil, unusableRoot(r.root, err)
		}
		// No lock on the directory here: the file in the state directory.
		r.viaFile = true
	}
	if err := ensureStateDir(filepath.Join(r.root, StateDir)); err != nil {
		return nil, err
	}
	p := r.file()
	f, err := filelock.OpenKept(p, os.O_RDWR|os.O_CREATE)
	if err != nil {
		return nil, unusableFile(p, err)
	}
	if err := filelock.TryLock(f); err != nil {
		f.Close()
		if errors.Is(err, filelock.ErrWouldBlock) {
			return nil, err
		}
		return nil, fmt.Errorf("%w: locking %s: %w", ErrUnusable, p, err)
	}
	return f, nil
}

func (r *runLock) file() string { return filepath.Join(r.root, StateDir, runName) }

// released returns a channel closed when the run lock that take found held
// is let go (filelock.Released).
func (r *runLock) released() <-chan struct{} {
	if r.viaFile {
		return filelock.Released(r.file())
	}
	return filelock.ReleasedDir(r.root)
}

// unusableRoot words a root directory that cannot be opened for the run
// lock.
func unusableRoot(root string, err error) error {
	if errors.Is(err, os.ErrPermission) {
		return fmt.Errorf("%w: %w: the project's root directory must be readable by this user to lock it: make it readable (chmod u+r %s)", ErrUnusable, err, root)
	}
	return fmt.Errorf("%w: %w: the project's root directory cannot be opened to lock it", ErrUnusable, err)
}

// unusableFile words a file of the queue that cannot be opened: a symlink
// or something else than a regular file stands there, or it cannot be
// read and written by this user.
func unusableFile(path string, err error) error {
	fi, lerr := os.Lstat(path)
	switch {
	case errors.Is(err, filelock.ErrSymlink), errors.Is(err, filelock.ErrNotRegular):
		return fmt.Errorf("%w: %w: remove it when no build of the project runs (buildguard creates it anew)", ErrUnusable, err)
	case lerr == nil && !fi.Mode().IsRegular():
		return fmt.Errorf("%w: %w: %s is not a regular file: remove it when no build of the project runs (buildguard creates it anew)", ErrUnusable, err, path)
	case errors.Is(err, os.ErrPermission) && errors.Is(lerr, os.ErrNotExist):
		return fmt.Errorf("%w: %w: make %s writable by this user, or remove it (buildguard creates it anew)", ErrUnusable, err, filepath.Dir(path))
	case errors.Is(err, os.ErrPermission):
		return fmt.Errorf("%w: %w: this user cannot read and write it; remove it, or give it back to this user", ErrUnusable, err)
	}
	return fmt.Errorf("%w: %w", ErrUnusable, err)
}
