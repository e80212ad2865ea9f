//go:build unix

package safebuild

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/buildguard/buildguard/internal/stateignore"
)

// ownDir is a directory buildguard made under the project: its state
// directory or the logs folder in it, opened without following a symlink:
// files are created, inspected and removed relative to it (openat and
// friends), never through a path that could meanwhile lead elsewhere.
type ownDir struct {
	f    *os.File
	path string
}

// openStateDir opens dir/.buildguard, creating it when missing, without
// following a symlink and checked on the opened handle: a real directory
// of this user (checkOwn). A state directory it creates is given its
// .gitignore (stateignore.Create); one that could not be written is no
// error of the build.
func openStateDir(dir string) (*ownDir, error) {
	project, err := os.Open(dir)
	if err != nil {
		return nil, fmt.Errorf("opening the project directory: %w", err)
	}
	defer project.Close()
	path := filepath.Join(dir, StateDir)
	state, created, err := openOwnDirAt(project, StateDir, path)
	if err != nil {
		return nil, err
	}
	if created {
		_ = stateignore.Create(path)
	}
	return &ownDir{f: state, path: path}, nil
}

// logs opens the state directory's logs folder, path, as openStateDir
// opens the state directory: through the state directory's handle.
func (d *ownDir) logs(path string) (*ownDir, error) {
	logs, _, err := openOwnDirAt(d.f, "logs", path)
	if err != nil {
		return nil, err
	}
	return &ownDir{f: logs, path: path}, nil
}

// open opens name in the folder for reading, never through a symlink and
// never waiting on a named pipe.
func (d *ownDir) open(name string) (*os.File, error) {
	fd, err := unix.Openat(int(d.f.Fd()), name, unix.O_RDONLY|unix.O_NOFOLLOW|unix.O_NONBLOCK|unix.O_CLOEXEC, 0)
	if err != nil {
		if errors.Is(err, unix.ENOENT) {
			err = fs.ErrNotExist
		}
		return nil, &fs.PathError{Op: "open", Path: filepath.Join(d.path, name), Err: err}
	}
	return os.NewFile(uintptr(fd), filepath.Join(d.path, name)), nil
}

// linkNew gives the folder a file name holding data, complete or not at
// all: written under a temporary name, then linked to name, which fails
// with fs.ErrExist when name exists.
func (d *ownDir) linkNew(name string, data []byte) error {
	dfd := int(d.f.Fd())
	var tmp string
	var f *os.File
	for i := 0; ; i++ {
		tmp = fmt.Sprintf(".%s-%d-%d", name, os.Getpid(), time.Now().UnixNano()+int64(i))
		var err error
		if f, err = d.create(tmp); err == nil {
			break
		} else if !errors.Is(err, fs.ErrExist) || i > 100 {
			return err
		}
	}
	defer unix.Unlinkat(dfd, tmp, 0)
	_, err := f.Write(data)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return err
	}
	if err := unix.Linkat(dfd, tmp, dfd, name, 0); err != nil {
		if errors.Is(err, unix.EEXIST) {
			return fs.ErrExist
		}
		return &fs.PathError{Op: "link", Path: filepath.Join(d.path, name), Err: err}
	}
	return nil
}

// openOwnDirAt opens name in parent as a directory, creating it (0755) when
// missing, never through a symlink, and checks what it opened; created
// says this call made the directory.
func openOwnDirAt(parent *os.File, name, path string) (f *os.File, created bool, err error) {
	pfd := int(parent.Fd())
	err = unix.Mkdirat(pfd, name, 0o755)
	if err != nil && !errors.Is(err, unix.EEXIST) {
		return nil, false, fmt.Errorf("creating %s: %w", path, err)
	}
	created = err == nil
	f, err = openMadeDirAt(pfd, path, name)
	return f, created, err
}

// openMadeDirAt opens and checks the directory name in the folder pfd.
func openMadeDirAt(pfd int, path, name string) (*os.File, error) {
	fd, err := unix.Openat(pfd, name, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		// A symlink, or not a directory: say which, as Lstat sees it.
		if fi, lerr := os.Lstat(path); lerr == nil {
			if cerr := checkOwn(path, fi, true); cerr != nil {
				return nil, cerr
			}
		}
		return nil, fmt.Errorf("%w: opening %s: %w", ErrStateDir, path, err)
	}
	f := os.NewFile(uintptr(fd), path)
	fi, err := f.Stat()
	if err == nil {
		err = checkOwn(path, fi, true)
	}
	if err != nil {
		f.Close()
		return nil, err
	}
	return f, nil
}

func (d *ownDir) Close() error { return d.f.Close() }

// create creates name new in the folder, never through a symlink.
func (d *ownDir) create(name string) (*os.File, error) {
	fd, err := unix.Openat(int(d.f.Fd()), name, unix.O_WRONLY|unix.O_CREAT|unix.O_EXCL|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0o644)
	if err != nil {
		if errors.Is(err, unix.EEXIST) {
			err = fs.ErrExist
		}
		return nil, &fs.PathError{Op: "create", Path: filepath.Join(d.path, name), Err: err}
	}
	return os.NewFile(uintptr(fd), filepath.Join(d.path, name)), nil
}

// names lists the folder's entries.
func (d *ownDir) names() ([]string, error) {
	dup, err := unix.Dup(int(d.f.Fd()))
	if err != nil {
		return nil, err
	}
	f := os.NewFile(uintptr(dup), d.path)
	defer f.Close()
	if _, err := f.Seek(0, 0); err != nil {
		return nil, err
	}
	return f.Readdirnames(-1)
}

// lstat describes name in the folder without following a symlink.
func (d *ownDir) lstat(name string) (fs.FileInfo, error) {
	var st unix.Stat_t
	if err := unix.Fstatat(int(d.f.Fd()), name, &st, unix.AT_SYMLINK_NOFOLLOW); err != nil {
		return nil, err
	}
	return statInfo{name: name, st: st}, nil
}

// remove removes the file name from the folder (never a directory).
func (d *ownDir) remove(name string) error {
	return unix.Unlinkat(int(d.f.Fd()), name, 0)
}

// statInfo is an fs.FileInfo of a unix.Stat_t, for checkOwn.
type statInfo struct {
	name string
	st   unix.Stat_t
}

func (s statInfo) Name() string { return s.name }
func (s statInfo) Size() int64  { return s.st.Size }
func (s statInfo) Mode() fs.FileMode {
	m := fs.FileMode(s.st.Mode & 0o777)
	switch s.st.Mode & unix.S_IFMT {
	case unix.S_IFDIR:
		m |= fs.ModeDir
	case unix.S_IFLNK:
		m |= fs.ModeSymlink
	case unix.S_IFREG:
	default:
		m |= fs.ModeIrregular
	}
	return m
}
func (s statInfo) ModTime() time.Time { return time.Unix(s.st.Mtim.Unix()) }
func (s statInfo) IsDir() bool        { return s.Mode().IsDir() }
func (s statInfo) Sys() any           { return &syscall.Stat_t{Uid: s.st.Uid} }

// ownedByUs reports whether fi belongs to the effective user.
func ownedByUs(fi fs.FileInfo) bool {
	st, ok := fi.Sys().(*syscall.Stat_t)
	return !ok || int(st.Uid) == os.Geteuid()
}
