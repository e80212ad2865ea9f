package boundedfile

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
)

// CheckURLFile checks the path a server's URL file is to be written at:
// nothing there yet, or a regular file, which it replaces. Anything else — a
// symlink (even to a regular file), a directory, a named pipe, a device,
// a socket — is refused (NotOwnable): the file is written and removed
// only as a file of its own, never through a link
// (docs/decisions.md#D23), and never replaces /dev/null. A path that
// cannot be looked at is Unreadable.
func CheckURLFile(file string) error {
	fi, err := os.Lstat(file)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil
	case err != nil:
		return &Refusal{Unreadable, err.Error()}
	case fi.Mode().IsRegular():
		return nil
	case fi.Mode()&fs.ModeSymlink != 0:
		to, err := os.Readlink(file)
		if err != nil {
			to = "something unreadable"
		}
		return &Refusal{NotOwnable, fmt.Sprintf("%s is a symlink to %s, and the URL file is never written through a link", file, to)}
	}
	return &Refusal{NotOwnable, fmt.Sprintf("%s is %s", file, Describe(fi.Mode()))}
}

// URLFile is a URL file WriteURLFile wrote: Remove deletes it while the
// path still names the file written.
type URLFile struct {
	path string
	info fs.FileInfo // of the file created, taken from its descriptor
	// held keeps the file created open until Remove (nil on Windows, where
	// an open file cannot be renamed), so its device and inode numbers
	// cannot pass to a file made after it is deleted: a file someone
	// puts at the path is never taken for it.
	held *os.File
}

// WriteURLFile writes line (a server's URL) and a newline to a file of its own, created new
// (O_EXCL, mode 0600) beside file, and renames it to file, replacing a
// regular file there atomically. A rename replaces what is at the path,
// never what a link there points to, so a link put there after the check
// is replaced, not followed. A refusal of the path (CheckURLFile's, before
// the write or again just before the rename) is a *Refusal.
func WriteURLFile(file, line string) (*URLFile, error) {
	if err := CheckURLFile(file); err != nil {
		return nil, err
	}
	tmp, err := os.CreateTemp(filepath.Dir(file), "."+filepath.Base(file)+".*")
	if err != nil {
		return nil, err
	}
	w := &URLFile{path: file, held: tmp}
	renamed := false
	defer func() {
		if !renamed {
			w.close()
			_ = os.Remove(tmp.Name())
		}
	}()
	if w.info, err = fill(tmp, line); err != nil {
		return nil, err
	}
	if runtime.GOOS == "windows" {
		w.close()
	}
	// Checked again just before the rename: what is there now is replaced.
	if err := CheckURLFile(file); err != nil {
		return nil, fmt.Errorf("%w (it changed while the URL was written)", err)
	}
	if err := os.Rename(tmp.Name(), file); err != nil {
		return nil, err
	}
	renamed = true
	return w, nil
}

// fill writes line and a newline to f with mode 0600 and returns what
// identifies it.
func fill(f *os.File, line string) (fs.FileInfo, error) {
	if err := f.Chmod(0o600); err != nil {
		return nil, err
	}
	if _, err := f.WriteString(line + "\n"); err != nil {
		return nil, err
	}
	return f.Stat()
}

// close closes the file held, if any.
func (w *URLFile) close() {
	if w.held != nil {
		_ = w.held.Close()
		w.held = nil
	}
}

// Remove deletes the file written, so no script reads what a server that
// is gone wrote; a file someone put there since (a link, another file) is
// left alone. Remove of a nil *URLFile does nothing.
func (w *URLFile) Remove() error {
	if w == nil {
		return nil
	}
	defer w.close()
	fi, err := os.Lstat(w.path)
	if err != nil || !os.SameFile(fi, w.info) {
		return nil
	}
	return os.Remove(w.path)
}
