package hostconfig

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/buildguard/buildguard/internal/boundedfile"
)

// Write writes the planned changes in order (docs/hosts.md#1), each with
// Change.Write, and stops at the first that fails: it returns how many
// were written or left unchanged before it, and its error. Every change
// is written when err is nil.
func Write(changes []Change) (done int, err error) {
	for i, c := range changes {
		if err := c.Write(); err != nil {
			return i, err
		}
	}
	return len(changes), nil
}

// ErrChanged marks a file that changed between the plan and the write:
// writing the plan would lose what changed, so it is not written.
var ErrChanged = errors.New("changed since init read it")

// Write writes the change atomically (a temporary file beside the target,
// renamed over it) with the file's mode; a symlink stays a link and its
// target is replaced. A missing directory is created. An unchanged file is
// not touched. A file that no longer holds what the plan read (or that
// appeared since) is not written: ErrChanged.
func (c Change) Write() error {
	if !c.Changed() {
		return nil
	}
	if c.Exists {
		cur, err := boundedfile.ReadFile(c.Target, boundedfile.ConfigLimit)
		if err != nil || !bytes.Equal(cur, c.Old) {
			return fmt.Errorf("%s %w; run init again", c.Target, ErrChanged)
		}
	} else if _, err := os.Lstat(c.Target); err == nil {
		return fmt.Errorf("%s %w (it did not exist then); run init again", c.Target, ErrChanged)
	}
	return WriteAtomic(c.Target, c.New, c.Mode)
}

// WriteAtomic writes data to path through a temporary file in the same
// directory renamed over it, so a reader sees the old file or the new one,
// never a part. An existing file keeps its mode, and its owner and group
// when that can be kept (run as root); a new file gets mode less the
// umask. Missing directories are created; run as root, each new directory
// and a new file take the owner and group of the directory they are
// created in (docs/hosts.md#1), so `sudo buildguard init` with a user's
// HOME leaves that user files they own.
func WriteAtomic(path string, data []byte, mode fs.FileMode) error {
	dir := filepath.Dir(path)
	if err := mkdirAllOwned(dir); err != nil {
		return err
	}
	old, statErr := os.Stat(path)
	tmp, err := createTemp(dir, filepath.Base(path), mode)
	if err != nil {
		return fmt.Errorf("creating a temporary file beside %s: %w", path, err)
	}
	defer os.Remove(tmp.Name())
	if statErr == nil {
		keepOwner(tmp, old)
		err = tmp.Chmod(old.Mode().Perm())
	} else {
		err = takeDirOwner(tmp, dir)
	}
	if err == nil {
		_, err = tmp.Write(data)
	}
	if err == nil {
		err = tmp.Sync()
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("writing %s: %w", tmp.Name(), err)
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return fmt.Errorf("replacing %s: %w", path, err)
	}
	return nil
}

// createTemp creates a new file beside base in dir with perm (less the
// umask, as for any new file).
func createTemp(dir, base string, perm fs.FileMode) (*os.File, error) {
	for range 100 {
		var r [6]byte
		_, _ = rand.Read(r[:])
		name := filepath.Join(dir, "."+base+"."+hex.EncodeToString(r[:])+".tmp")
		f, err := os.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_EXCL, perm)
		if !errors.Is(err, fs.ErrExist) {
			return f, err
		}
	}
	return nil, fmt.Errorf("no free temporary name in %s", dir)
}

// mkdirAllOwned creates dir and its missing parents (0755 less the umask),
// each taking the owner of the directory it is created in when run as root.
func mkdirAllOwned(dir string) error {
	if fi, err := os.Stat(dir); err == nil {
		if !fi.IsDir() {
			return fmt.Errorf("creating %s: %w", dir, errors.New("not a directory"))
		}
		return nil
	}
	parent := filepath.Dir(dir)
	if parent != dir {
		if err := mkdirAllOwned(parent); err != nil {
			return err
		}
	}
	if err := os.Mkdir(dir, 0o755); err != nil && !errors.Is(err, fs.ErrExist) {
		return fmt.Errorf("creating %s: %w", dir, err)
	}
	return takeParentOwner(dir)
}
