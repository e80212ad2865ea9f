package filelock

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"testing"
	"time"
)

// TestTwoOpensExclude: two opens of one file in one process exclude each
// other, and closing the holder frees the lock.
func TestTwoOpensExclude(t *testing.T) {
	p := filepath.Join(t.TempDir(), "lock")
	a, err := OpenNoFollow(p, os.O_RDWR|os.O_CREATE)
	if err != nil {
		t.Fatal(err)
	}
	if err := TryLock(a); err != nil {
		t.Fatal(err)
	}
	b, err := OpenNoFollow(p, os.O_RDWR)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	if err := TryLock(b); !errors.Is(err, ErrWouldBlock) {
		t.Fatalf("second TryLock = %v, want ErrWouldBlock", err)
	}
	released := Released(p)
	select {
	case <-released:
		t.Fatal("Released fired while the lock was held")
	case <-time.After(20 * time.Millisecond):
	}
	a.Close()
	select {
	case <-released:
	case <-time.After(5 * time.Second):
		t.Fatal("Released did not fire after the holder closed the file")
	}
	if err := TryLock(b); err != nil {
		t.Fatalf("TryLock after the holder closed: %v", err)
	}
}

// TestLockContextCancelled: a cancelled wait returns at once and leaves
// nothing locked once the holder lets go.
func TestLockContextCancelled(t *testing.T) {
	p := filepath.Join(t.TempDir(), "lock")
	holder, err := LockContext(context.Background(), p)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Millisecond)
	defer cancel()
	if _, err := LockContext(ctx, p); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("LockContext = %v, want the deadline", err)
	}
	holder.Close()
	got, err := LockContext(context.Background(), p) // the abandoned wait let go
	if err != nil {
		t.Fatal(err)
	}
	got.Close()
}

func TestOpenNoFollowRefusesSymlinks(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("symlinks need privileges on Windows")
	}
	dir := t.TempDir()
	target := filepath.Join(dir, "target")
	os.WriteFile(target, nil, 0o600)
	link := filepath.Join(dir, "link")
	os.Symlink(target, link)
	if _, err := OpenNoFollow(link, os.O_RDWR|os.O_CREATE); !errors.Is(err, ErrSymlink) {
		t.Fatalf("OpenNoFollow(symlink) = %v, want ErrSymlink", err)
	}
	if _, err := OpenNoFollow(dir, os.O_RDONLY); !errors.Is(err, ErrNotRegular) {
		t.Fatalf("OpenNoFollow(dir) = %v, want ErrNotRegular", err)
	}
}

// TestReleasedSharesOneWait: every watch of one file in a process shares
// one wait (one open file, one blocked thread), so hundreds of builds
// waiting in one server behind the same ticket (identical safe builds that
// joined one) cost one thread, not one each toward the runtime's limit of
// 10000; each still fires when the holder lets go.
func TestReleasedSharesOneWait(t *testing.T) {
	p := filepath.Join(t.TempDir(), "lock")
	holder, err := LockContext(context.Background(), p)
	if err != nil {
		t.Fatal(err)
	}
	var watches []<-chan struct{}
	for range 200 {
		watches = append(watches, Released(p))
	}
	for i, w := range watches[1:] {
		if w != watches[0] {
			t.Fatalf("watch %d of the same file waits on its own", i+1)
		}
	}
	holder.Close()
	for _, w := range watches {
		select {
		case <-w:
		case <-time.After(5 * time.Second):
			t.Fatal("a watch did not fire within 5 s of the release")
		}
	}
	// A watch after the release is a new one, and fires at once.
	select {
	case <-Released(p):
	case <-time.After(5 * time.Second):
		t.Fatal("a watch of a free file did not fire within 5 s")
	}
}

// TestIsAt: a file is at its path until it is removed or replaced there.
func TestIsAt(t *testing.T) {
	p := filepath.Join(t.TempDir(), "lock")
	f, err := OpenNoFollow(p, os.O_RDWR|os.O_CREATE)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if !IsAt(f, p) {
		t.Fatal("a file just opened is not at its path")
	}
	if err := os.Remove(p); err != nil {
		t.Fatal(err)
	}
	if IsAt(f, p) {
		t.Fatal("a removed file is still at its path")
	}
	if err := os.WriteFile(p, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if IsAt(f, p) {
		t.Fatal("a replaced file is still at its path")
	}
}

// TestDirectoryLock: where directories can be locked, two opens of one
// directory exclude each other and ReleasedDir fires when the holder lets
// go; elsewhere OpenDir says ErrNoDirLock.
func TestDirectoryLock(t *testing.T) {
	dir := t.TempDir()
	a, err := OpenDir(dir)
	if runtime.GOOS == "windows" {
		if !errors.Is(err, ErrNoDirLock) {
			t.Fatalf("OpenDir on Windows = %v, want ErrNoDirLock", err)
		}
		return
	}
	if err != nil {
		t.Fatal(err)
	}
	if err := TryLock(a); err != nil {
		t.Fatal(err)
	}
	b, err := OpenDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	if err := TryLock(b); !errors.Is(err, ErrWouldBlock) {
		t.Fatalf("second TryLock of the directory = %v, want ErrWouldBlock", err)
	}
	released := ReleasedDir(dir)
	a.Close()
	select {
	case <-released:
	case <-time.After(5 * time.Second):
		t.Fatal("ReleasedDir did not fire within 5 s of the holder closing the directory")
	}
	if err := TryLock(b); err != nil {
		t.Fatalf("TryLock after the holder closed: %v", err)
	}
}
