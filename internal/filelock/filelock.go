// Package filelock holds advisory locks on whole open files that the kernel
// releases when the holder dies: flock(2) on Linux and macOS, LockFileEx on
// Windows. A lock belongs to the open file (not to the process), so two
// opens of one file in one process exclude each other as two processes do,
// and a file closed or a process killed (SIGKILL included) leaves nothing
// locked. It is the leaf primitive of the build queue (service/buildqueue,
// docs/decisions.md#D18); it knows nothing about queues or builds.
//
// It also opens the files it locks without following a symlink in the last
// path element (OpenNoFollow), so a lock file cannot be redirected; tells
// whether a locked file is still the one at its path (IsAt), since a lock
// on a file removed or replaced there excludes nobody who opens the path
// now; and opens a directory to lock it where the system can (OpenDir).
package filelock

import (
	"context"
	"errors"
	"os"
	"sync"
)

// ErrWouldBlock is returned by TryLock when another open file holds a
// conflicting lock.
var ErrWouldBlock = errors.New("the file is locked by another holder")

// TryLock takes an exclusive lock on f without waiting; it returns
// ErrWouldBlock when another open file holds a lock on it.
func TryLock(f *os.File) error { return lock(f, true, false) }

// Lock takes a lock on f, exclusive or shared, waiting as long as it takes.
// The wait cannot be interrupted: use LockContext for a bounded wait.
func Lock(f *os.File, exclusive bool) error { return lock(f, exclusive, true) }

// Unlock releases the lock on f. Closing f releases it too.
func Unlock(f *os.File) error { return unlock(f) }

// LockContext takes an exclusive lock on the file at path, opened (and
// created, mode 0600) without following a symlink, waiting until it is free
// or ctx is done. It returns the locked file; closing it releases the lock.
// When ctx ends first, the wait goes on in the background on a file of its
// own and releases the lock the moment it gets it, so nothing stays locked.
func LockContext(ctx context.Context, path string) (*os.File, error) {
	f, err := OpenNoFollow(path, os.O_RDWR|os.O_CREATE)
	if err != nil {
		return nil, err
	}
	switch err := TryLock(f); {
	case err == nil:
		return f, nil
	case !errors.Is(err, ErrWouldBlock):
		f.Close()
		return nil, err
	}
	got := make(chan error, 1)
	go func() { got <- Lock(f, true) }()
	select {
	case err := <-got:
		if err != nil {
			f.Close()
			return nil, err
		}
		return f, nil
	case <-ctx.Done():
		go func() {
			<-got
			f.Close() // releases the lock taken after we stopped waiting
		}()
		return nil, ctx.Err()
	}
}

// Released returns a channel that is closed once no other open file holds
// an exclusive lock on the file at path: at once when there is no such
// file, else when its holder unlocks, closes or dies. The wait holds a
// shared lock for an instant and keeps nothing locked. It cannot be
// cancelled: the goroutine ends when the lock is released. The watches of
// one path in a process share one wait, so many waiters behind one holder
// cost one open file and one blocked thread, not one each.
func Released(path string) <-chan struct{} {
	return released(path, func() (*os.File, error) { return OpenNoFollow(path, os.O_RDONLY) })
}

// ReleasedDir is Released for a directory locked through OpenDir.
func ReleasedDir(path string) <-chan struct{} {
	return released(path+string(os.PathSeparator), func() (*os.File, error) { return OpenDir(path) })
}

// released shares the waits of Released and ReleasedDir by key.
func released(key string, open func() (*os.File, error)) <-chan struct{} {
	watching.Lock()
	defer watching.Unlock()
	if done, ok := watching.m[key]; ok {
		return done
	}
	done := make(chan struct{})
	watching.m[key] = done
	go func() {
		defer func() {
			watching.Lock()
			delete(watching.m, key)
			watching.Unlock()
			close(done)
		}()
		f, err := open()
		if err != nil {
			return
		}
		defer f.Close()
		if Lock(f, false) == nil {
			_ = Unlock(f)
		}
	}()
	return done
}

// watching holds the waits of Released in progress, by path (a
// directory's with a trailing separator).
var watching = struct {
	sync.Mutex
	m map[string]chan struct{}
}{m: map[string]chan struct{}{}}

// ErrSymlink is returned by OpenNoFollow for a path whose last element is a
// symlink: nothing of the build queue is followed through one.
var ErrSymlink = errors.New("is a symlink, which buildguard does not follow here")

// ErrNotRegular is returned by OpenNoFollow for a path that names something
// other than a regular file.
var ErrNotRegular = errors.New("is not a regular file")

// IsAt reports whether f is still the file at path: not removed, not
// renamed away, not replaced by another file, symlink or directory. A lock
// taken on a file that is no longer at its path excludes nobody who opens
// the path now.
func IsAt(f *os.File, path string) bool {
	held, err := f.Stat()
	if err != nil {
		return false
	}
	now, err := os.Lstat(path)
	return err == nil && os.SameFile(held, now)
}

// ErrNoDirLock is returned by OpenDir where a directory cannot hold a lock
// (Windows), and by TryLock and Lock of a directory on a file system that
// cannot lock one (NFS on Linux); lock a file instead.
var ErrNoDirLock = errors.New("a directory cannot be locked on this system")
